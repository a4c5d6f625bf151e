// One probe's settings in the Probes dock, built from its entry in the probe catalog
// (kvbe/probe/probe_catalog.h): a row for each option the catalog shows in the window, with an
// editor for its kind (a text field with the default as its hint, a choice, a check box, a path
// with Browse…), and the `kvbe-cli probe` arguments for the form as it stands.
#pragma once

#include "kvbe/probe/probe_catalog.h"

#include <QWidget>

#include <vector>

class QCheckBox;
class QComboBox;
class QFormLayout;
class QLineEdit;

namespace kvbe {

class ProbeForm : public QWidget {
    Q_OBJECT
  public:
    explicit ProbeForm(const ProbeDescription& probe, QWidget* parent = nullptr);

    const ProbeDescription& probe() const { return m_probe; }
    // Sets an option's field: a text field's text, a choice's value, a check box on for "true"
    // or "1"; a member of a group also becomes the group's choice. False for an option the form
    // does not show, or a value its choice does not have.
    bool setValue(const QString& flag, const QString& value);
    // A Model field left empty is run with this model (the scenario's).
    void setDefaultModel(const QString& model);
    // The GPU preset passed as --gpu where the probe has that option and the form does not show
    // it (the scenario's GPU, not the probe's default scenario's).
    void setDefaultGpu(const QString& gpu);
    // The arguments after `kvbe-cli probe`: the key, then each option set to something other
    // than its default, in the catalog's order. Empty fields are left to kvbe-cli's defaults,
    // which its --help documents.
    QStringList arguments() const;

  private:
    // One row: an option, or a group of options that exclude each other (one of them chosen).
    struct Row {
        std::vector<const ProbeOption*> options; // one, or a group's members shown here
        QWidget* row = nullptr;                  // what the layout holds
        QLineEdit* edit = nullptr;               // text and path kinds
        QComboBox* choice = nullptr;             // a Choice, or which member of a group
        QCheckBox* check = nullptr;              // a Flag
        const ProbeOption* chosen() const;       // the option the row stands for now
    };
    Row* rowOf(const QString& flag);
    const Row* rowOf(const QString& flag) const;
    QWidget* pathRow(Row& r);
    void updateRows();
    void browse(const Row& r);

    const ProbeDescription& m_probe;
    QFormLayout* m_form = nullptr;
    std::vector<Row> m_rows;
    QString m_defaultModel;
    QString m_defaultGpu;
};

} // namespace kvbe
