// A serving probe run's results in the Probes dock, as the other probes show theirs: the TTFT
// medians it measured (cold prompts and hits per tier, with their 5th–95th percentiles) in a
// table, and once the run ends the values fitted to them (utilisation, the shared overhead, each
// tier's bandwidth, t_fixed and p*) in a sentence, each sample's fitted TTFT and residual beside
// its measurement.
#pragma once

#include "kvbe/probe/probe_protocol.h"

#include <QWidget>

class QLabel;
class QTableWidget;

namespace kvbe {

class TtftFitView : public QWidget {
    Q_OBJECT
  public:
    // `run`: the run's index, in the object names (runTtft<i>, runFit<i>).
    TtftFitView(int run, QWidget* parent = nullptr);
    // A cold or hit TTFT point (seriesRole ColdTtft or the serving probe's hit series); false,
    // and nothing shown, for any other point.
    bool addPoint(const ProbePoint& p);
    // The run's result: the fit, where it has one.
    void showResult(const ProbeResult& r);

  private:
    QLabel* m_fit;
    QTableWidget* m_table;
};

} // namespace kvbe
