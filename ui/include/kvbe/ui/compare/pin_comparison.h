// The pinned scenarios side by side, as numbers: the break-even bandwidth B* at chosen prompt
// lengths and each tier's break-even prefix p*, for the current scenario and every pin, each with
// its difference from the current scenario, and their texts. The numbers are core's: B* from
// CostModel::breakevenBandwidth, p* from the curves core computed for each scenario
// (CostModel::breakevenPrefix). The window's table (pin_table_model.h), the slide
// (pin_table_painter.h) and the CSV (pin_table_csv.h) show it.
#pragma once

#include "kvbe/base/result.h"
#include "kvbe/ui/results/scenario_result.h"

#include <QString>
#include <QStringList>

#include <optional>
#include <vector>

namespace kvbe {

// The lengths the table starts with: 4k, 32k and 128k tokens.
std::vector<double> defaultCompareLengths();
inline constexpr int kMaxCompareLengths = 8;
// "4k, 32k, 128k": up to kMaxCompareLengths whole token counts (k = 1024, m = 1024²), sorted,
// repeats dropped; or the sentence that says what is wrong with the text.
Result<std::vector<double>> parseCompareLengths(const QString& text);
// The lengths as parseCompareLengths reads them back: "4k, 32k, 128k".
QString compareLengthsText(const std::vector<double>& lengths);
// One length, short: "4k", "128k", "1m", "1,000".
QString shortTokens(double tokens);

// One number of one scenario, or why there is none.
struct CompareValue {
    enum class State {
        Number,      // value holds it
        Never,       // p*: the tier never pays off up to the model's context
        NoTier,      // the scenario has no such tier
        PastContext, // the length is past the scenario's model's context
        None,        // B*: recompute is no slower than the fixed cost, no bandwidth ties
    };
    State state = State::None;
    double value = 0; // GB/s for B*, tokens for p*
    bool isNumber() const { return state == State::Number; }
};

struct CompareColumn {
    enum class Kind { Bandwidth, Prefix };
    Kind kind = Kind::Bandwidth;
    double tokens = 0;  // Bandwidth: the prompt length
    QString tier;       // Prefix: the tier's name, as the first scenario that has it calls it
    std::string preset; // Prefix: the tier preset it matches by, if any
};

struct CompareRow {
    QString label;
    bool current = false;
    QString model;
    double contextTokens = 0;
    std::vector<CompareValue> values; // one per column
};

struct PinComparison {
    std::vector<CompareColumn> columns; // B* at each length, then p* per tier
    std::vector<CompareRow> rows;       // the current scenario, then the pins in order
    // Sentences on what the table leaves out (lengths past a model's context).
    QStringList notes;

    bool empty() const { return rows.empty(); }
    // A row's value against the current scenario's (row 0): difference and difference in %
    // of the current value; none where either is not a number (or the current one is 0).
    std::optional<double> delta(size_t row, size_t column) const;
    std::optional<double> deltaPercent(size_t row, size_t column) const;
};

// Tiers match across scenarios by their preset where both came from one, else by name; a tier
// of several scenarios is one column, named as the first scenario with it names it.
PinComparison comparePins(const ResultPtr& current, const std::vector<ResultPtr>& pins,
                          const std::vector<double>& lengths);

// Column titles: "B* at 4k" and "p* NVMe (PCIe 5.0)"; the unit is "GB/s" or "tokens". The
// window's header: "B*, GB/s\nat 4k", "p*, tokens\nNVMe\n(PCIe 5.0)" (long names on two lines).
QString columnTitle(const CompareColumn& c);
QString columnUnit(const CompareColumn& c);
QString columnHeader(const CompareColumn& c);
// A value with its unit ("12.3 GB/s", "8,192 tokens", "never", "—", "past context").
QString valueText(const CompareValue& v, const CompareColumn& c);
// A row's difference from the current scenario: "+4.10 GB/s" ("—" where there is none),
// "+25.3 %" (empty where there is none), and both on one line, "+4.10 GB/s (+25.3 %)".
QString deltaText(const PinComparison& t, size_t row, size_t column);
QString deltaPercentText(const PinComparison& t, size_t row, size_t column);
QString deltaLine(const PinComparison& t, size_t row, size_t column);

} // namespace kvbe
