// The scenario panel's storage tiers: the tier table (tier_table_model.h), adding a preset or a
// custom tier, removing one, and a tier's colour.
#pragma once

#include "kvbe/ui/scenario/scenario_part.h"
#include "kvbe/ui/scenario/tier_table_model.h"

class QTableView;

namespace kvbe {

class TierBox : public ScenarioPart {
    Q_OBJECT
  public:
    explicit TierBox(ScenarioEditing& editing, QWidget* parent = nullptr);
    void showScenario(const Scenario& s) override;
    // The model's layers, for tiers with a per-layer fixed cost.
    void showResult(const ScenarioResult& r) override;

  protected:
    void showEvent(QShowEvent* e) override;

  private:
    void addTier(const QString& presetKey);
    void pickTierColour();
    // The tier table's minimum width: every column whole, the name column elided at most to a
    // short name.
    void fitTierColumns();

    TierTableModel* m_tiers;
    QTableView* m_tierView;
};

} // namespace kvbe
