// A fleet plan's offload settings for vLLM and LMCache: the plan's tiers are one per node, shared
// by its servers, while vLLM's offload and LMCache's local backends are one per server; each
// server is given its share of the node's tier, and the settings say so. Worked by hand:
//   256 GiB of DRAM on a node of 2 servers: --kv-offloading-size 128 (GiB), or with K = 2
//   cpu_bytes_to_use 128 × 2^30 = 137,438,953,472; LMCache max_local_cpu_size 128.0 and of a
//   6.4e12-byte drive tier 6.4e12 / 2^30 / 2 = 2980.23 → 2980.2 GiB. One server a node: 256.
#include "test_support.h"

#include "kvbe/plan/serving_settings.h"

#include <QJsonDocument>
#include <QJsonObject>
#include <QTest>

using namespace kvbe;

namespace {

constexpr double kGiB = double(1ull << 30);

PlanSetup fleetSetup(int nodeServers) {
    PlanSetup s;
    s.base.instances = 4;
    s.base.fleet.enabled = true;
    s.base.fleet.nodeServers = nodeServers;
    s.gpusPerInstance = 1;
    return s;
}

QStringList settingLines(const std::string& text) {
    QStringList out;
    for (const auto& l : QString::fromStdString(text).split('\n'))
        if (!l.isEmpty() && !l.startsWith('#')) out << l;
    return out;
}

} // namespace

class TestServingSettingsFleet : public QObject {
    Q_OBJECT
  private slots:
    void eachServerGetsItsShareOfTheNodesTier() {
        const auto& presets = kvbe::test::presets();
        auto e = evaluate(*defaultScenario(presets), presets);
        QVERIFY(e.ok());
        PlanPoint p;
        p.dramBytes = 256 * kGiB;
        p.tiers = {PlanTier{"dram", 256 * kGiB, 0, 0, {}}};
        const PlanSetup two = fleetSetup(2), one = fleetSetup(1);

        auto v = servingSettings(ServingStack::Vllm, p, two, *e, presets, 512, 1000);
        QVERIFY(v.ok());
        QCOMPARE(settingLines(*v),
                 QStringList{"--kv-offloading-backend native --kv-offloading-size 128"});
        QVERIFY2(v->find("shared by its 2 servers; this stack keeps one per server, so each "
                         "server gets 1/2 of the node's") != std::string::npos,
                 v->c_str());
        v = servingSettings(ServingStack::Vllm, p, one, *e, presets, 512, 1000);
        QCOMPARE(settingLines(*v),
                 QStringList{"--kv-offloading-backend native --kv-offloading-size 256"});
        QVERIFY(v->find("shared by its") == std::string::npos);

        p.storeAfter = 2;
        v = servingSettings(ServingStack::Vllm, p, two, *e, presets, 512, 1000);
        const QString line = settingLines(*v).value(0);
        const QString prefix = "--kv-transfer-config '";
        QVERIFY2(line.startsWith(prefix), qPrintable(line));
        const auto c = QJsonDocument::fromJson(
                           line.mid(prefix.size(), line.size() - prefix.size() - 1).toUtf8())
                           .object();
        QCOMPARE(c["kv_connector_extra_config"].toObject()["cpu_bytes_to_use"].toInteger(),
                 qint64(137438953472));

        p.storeAfter = 1;
        p.drive = "nvme";
        p.drives = 1;
        p.tiers.push_back(PlanTier{"nvme", 6.4e12, 0, 0, {}});
        auto l = servingSettings(ServingStack::LMCache, p, two, *e, presets, 512, 1000);
        QVERIFY(l.ok());
        const QStringList lines = settingLines(*l);
        QVERIFY2(lines.contains("max_local_cpu_size: 128.0"), l->c_str());
        QVERIFY2(lines.contains("max_local_disk_size: 2980.2"), l->c_str());
        QVERIFY(l->find("each server gets 1/2") != std::string::npos);
    }
};

QTEST_GUILESS_MAIN(TestServingSettingsFleet)
#include "tst_serving_settings_fleet.moc"
