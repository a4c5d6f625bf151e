// The parts of the scenario panel (scenario_panel.h): the model, the GPU, the storage tiers, the
// prompts and the advanced fields, each a widget that shows its fields of the Explorer's
// scenario and edits them as undoable steps, with refusals on the panel's message line.
#pragma once

#include "kvbe/ui/scenario/explorer.h"

#include <QWidget>

#include <functional>
#include <utility>

class QGroupBox;
class QSlider;
class QVBoxLayout;

namespace kvbe {

// Undo merge keys: a drag of a slider or the keystrokes of one field are one undo step.
enum ScenarioMergeKey {
    kMergeUtil = 1,
    kMergeFraction,
    kMergePeak,
    kMergeLengths,
    kMergeSweep,
    kMergeParams,
    kMergeRamp,
    kMergeHostLink
};

// What the panel and its parts share: the Explorer, whether the panel is showing a scenario
// (its controls' signals are then no edits) or applying an edit of its own (the Explorer's
// scenarioChanged is then no news), and the panel's answers to an edit.
class ScenarioEditing {
  public:
    struct Panel {
        std::function<void(const QString&)> showMessage; // "" hides the message line
        std::function<void()> showScenario;              // every part shows the scenario again
        std::function<void()> edited;                    // after every edit (the name follows)
    };
    ScenarioEditing(Explorer* explorer, Panel panel)
        : m_explorer(explorer), m_panel(std::move(panel)) {}

    Explorer* explorer() const { return m_explorer; }
    bool showing() const { return m_showing; }
    bool applying() const { return m_applying; }
    void setShowing(bool on) { m_showing = on; }

    // A change of the scenario, undoable as `what`; mergeKey ≥ 0 merges a drag into one step.
    template <class F> void edit(const QString& what, F&& change, int mergeKey = -1) {
        if (m_showing) return;
        Scenario s = m_explorer->scenario();
        change(s);
        ownChange([&] { m_explorer->edit(s, what, mergeKey); });
        m_panel.edited();
    }
    // Runs `f` (a change of the Explorer's) as the panel's own.
    template <class F> void ownChange(F&& f) {
        m_applying = true;
        f();
        m_applying = false;
    }
    void showMessage(const QString& text) const { m_panel.showMessage(text); }
    void showScenario() const { m_panel.showScenario(); }

  private:
    Explorer* m_explorer;
    Panel m_panel;
    bool m_showing = false;
    bool m_applying = false;
};

class ScenarioPart : public QWidget {
    Q_OBJECT
  public:
    ScenarioPart(ScenarioEditing& editing, QWidget* parent);

    // The scenario's values in the part's controls.
    virtual void showScenario(const Scenario& s) = 0;
    // What the part says of a computed result (defaults, the model's summary); nothing by
    // default.
    virtual void showResult(const ScenarioResult& r) { Q_UNUSED(r); }

  protected:
    template <class F> void edit(const QString& what, F&& change, int mergeKey = -1) {
        m_editing.edit(what, std::forward<F>(change), mergeKey);
    }
    void showMessage(const QString& text) const { m_editing.showMessage(text); }
    bool showing() const { return m_editing.showing(); }
    Explorer* explorer() const { return m_editing.explorer(); }
    // The part's group box, added to it: titled, or untitled under a title of the part's own.
    QGroupBox* addBox(const QString& title = {});
    // A percent slider that shows keyboard focus (the style draws none).
    static QSlider* percentSlider(int min, int max, QWidget* parent);
    ScenarioEditing& m_editing;
    QVBoxLayout* m_layout; // the part's contents, without margins
};

} // namespace kvbe
