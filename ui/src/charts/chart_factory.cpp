#include "kvbe/ui/charts/chart_factory.h"

#include "kvbe/ui/charts/breakeven_chart.h"
#include "kvbe/ui/charts/fraction_chart.h"
#include "kvbe/ui/charts/frontier_chart.h"
#include "kvbe/ui/charts/model_size_chart.h"
#include "kvbe/ui/charts/ttft_chart.h"
#include "kvbe/ui/workload/workload_charts.h"

namespace kvbe {

QStringList chartKeys() {
    return {QStringLiteral("breakeven"), QStringLiteral("fraction"), QStringLiteral("ttft"),
            QStringLiteral("models"), QStringLiteral("frontier")};
}

QStringList workloadChartKeys() {
    return {QStringLiteral("workload-lengths"), QStringLiteral("workload-capacity"),
            QStringLiteral("workload-ttft")};
}

std::unique_ptr<ChartView> createChart(const QString& key, QWidget* parent) {
    if (key == QLatin1String("breakeven")) return std::make_unique<BreakevenChart>(parent);
    if (key == QLatin1String("fraction")) return std::make_unique<FractionChart>(parent);
    if (key == QLatin1String("ttft")) return std::make_unique<TtftChart>(parent);
    if (key == QLatin1String("models")) return std::make_unique<ModelSizeChart>(parent);
    if (key == QLatin1String("frontier")) return std::make_unique<FrontierChart>(parent);
    if (key == QLatin1String("workload-lengths"))
        return std::make_unique<PromptLengthChart>(parent);
    if (key == QLatin1String("workload-capacity")) return std::make_unique<CapacityChart>(parent);
    if (key == QLatin1String("workload-ttft"))
        return std::make_unique<TtftDistributionChart>(parent);
    return nullptr;
}

} // namespace kvbe
