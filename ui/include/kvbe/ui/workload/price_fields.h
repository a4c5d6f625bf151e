// The prices a plan weighs, on screen above the Plan chart: DRAM per GiB, each drive, the
// scenario's GPU per hour, and a node's link to a pool where the plan weighs one. Each shows the
// price in force (the shipped example table, overridden by the scenario's own `prices`), with its
// source in the tooltip; an edit is a scenario edit (undone like any other, saved in the scenario
// as `prices`), and the plan follows it.
#pragma once

#include <QWidget>

#include <map>
#include <string>
#include <vector>

class QGridLayout;
class QLabel;
class QLineEdit;

namespace kvbe {

class Explorer;
struct PriceTable;

class PriceFields : public QWidget {
    Q_OBJECT
  public:
    explicit PriceFields(Explorer* explorer, QWidget* parent = nullptr);

    // The fields by what they price: "dram", "gpu", "drive:nvme-gen5", "link:net-400g" ...
    // (object names "planPrice" + that, with ':' as '-'), for tests.
    QLineEdit* field(const QString& what) const;
    // The links to a pool the plan weighs (network tier preset keys; none: no link fields).
    void setLinks(std::vector<std::string> links);

  private:
    // Fields for the scenario's prices in force; rebuilt when the drives priced change.
    void showPrices();
    void edited(const QString& what, QLineEdit* field);
    QLineEdit* addField(const QString& what, const QString& label);

    Explorer* m_explorer;
    QGridLayout* m_row; // the fields, kPerRow label-field pairs a row
    QLabel* m_title;
    QLabel* m_error;
    std::map<QString, QLineEdit*> m_fields;
    std::vector<std::string> m_links;
};

} // namespace kvbe
