// The Workload view's Live tab: a live replay (the folder kvbe-cli probe replay --out wrote for
// the open trace) and, on request, the engine's own cache to model on it; the chart of both TTFT
// distributions (live_chart.h) and the figures, predicted against measured, as kvbe-cli trace
// replay --compare prints them. The comparison is part of the view's replay (computeWorkload), so
// it follows the scenario as the window edits it.
#pragma once

#include "kvbe/ui/charts/live_chart.h"

#include <QWidget>

class QCheckBox;
class QLabel;
class QLineEdit;
class QPushButton;

namespace kvbe {

class LiveSection : public QWidget {
    Q_OBJECT
  public:
    // Takes the chart into the section, under its controls.
    explicit LiveSection(LiveChart* chart, QWidget* parent = nullptr);
    LiveChart* chart() const { return m_chart; }
    // The figures and the folder shown for a replay's result.
    void setWorkload(const WorkloadPtr& w);
    // Sets the controls without asking for a replay.
    void showSettings(const QString& dir, const QString& engine, bool asRouted);
    QString figuresText() const;

  signals:
    // The user chose another folder, engine or routing: the view replays with them.
    void changed(const QString& dir, const QString& engine, bool asRouted);

  private:
    void choose();
    void emitChanged(); // the folder, engine and routing as the controls have them
    LiveChart* m_chart;
    QLabel* m_folder;
    QLineEdit* m_engine;
    QCheckBox* m_asRouted;
    QPushButton* m_clear;
    QLabel* m_figures;
    QString m_dir;
};

} // namespace kvbe
