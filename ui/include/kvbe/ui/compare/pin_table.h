// The "Pin table" tab: the pinned scenarios side by side (pin_comparison.h) in a table
// (pin_table_model.h), with CSV (pin_table_csv.h) and an image for slides (pin_table_painter.h).
#pragma once

#include "kvbe/ui/compare/pin_comparison.h"
#include "kvbe/ui/compare/pin_table_csv.h"
#include "kvbe/ui/compare/pin_table_model.h"
#include "kvbe/ui/compare/pin_table_painter.h"

#include <QWidget>

#include <vector>

class QLabel;
class QLineEdit;
class QTableView;

namespace kvbe {

// The "Pin table" tab: the lengths to compare at, the table, the notes, and export buttons.
// It follows the explorer: a new result, a pin added, renamed or removed.
class Explorer;
class PinTableView : public QWidget {
    Q_OBJECT
  public:
    explicit PinTableView(Explorer* explorer, QWidget* parent = nullptr);

    const PinComparison& comparison() const { return m_model->comparison(); }
    const std::vector<double>& lengths() const { return m_lengths; }
    // False (and the reason under the field) where the text is not a list of lengths.
    bool setLengthsText(const QString& text);
    void refresh();

  signals:
    // The export buttons: "csv", "png", "svg" or "pdf"; the window asks for the file.
    void exportRequested(const QString& format);

  private:
    Explorer* m_explorer;
    PinTableModel* m_model;
    QTableView* m_view;
    QLineEdit* m_lengthsEdit;
    QLabel* m_message;
    QLabel* m_notes;
    std::vector<double> m_lengths;
};

} // namespace kvbe
