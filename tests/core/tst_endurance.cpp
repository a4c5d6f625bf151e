// Drive endurance (docs/workload-model.md, "Drive endurance"): whole drives, writes per day,
// drive writes per day and the years to rated endurance, worked out by hand; the drive fields
// of the tier presets and of scenario tiers.
#include "kvbe/scenario/scenario.h"
#include "kvbe/trace/trace_endurance.h"
#include "test_support.h"

#include <QTest>

using namespace kvbe;

namespace {

DriveRating drive(double dwpd, double years, double tb) {
    DriveRating d;
    d.model = "test drive";
    d.writesPerDay = dwpd;
    d.warrantyYears = years;
    d.capacityBytes = tb * 1e12;
    return d;
}

TierReport tier(double capacityBytes, double offered, double stored) {
    TierReport t;
    t.name = "nvme";
    t.capacityBytes = capacityBytes;
    t.bytesWritten = offered;
    t.bytesStored = stored;
    return t;
}

} // namespace

class TestEndurance : public QObject {
    Q_OBJECT
  private slots:
    // 8 TB of 7.68 TB drives rated 1 DWPD for 5 years; 1.2 TB offered and 1 TB stored in an
    // hour of trace.
    //   drives: ceil(8 / 7.68) = 2, installed 15.36 TB
    //   stored per day: 1 TB × 86,400 / 3,600 = 24 TB; offered 28.8 TB
    //   drive writes per day: 24 / 15.36 = 1.5625
    //   rated endurance: 1 × 365 × 5 × 15.36 TB = 28,032 TB, which 24 TB a day writes in
    //   1,168 days = 3.2 years, short of the 5-year warranty.
    void enduranceByHand() {
        const auto e = tierEndurance(tier(8e12, 1.2e12, 1e12), drive(1, 5, 7.68), 3600);
        QCOMPARE(*e.drives, std::int64_t(2));
        QCOMPARE(e.installedBytes, 15.36e12);
        QCOMPARE(*e.bytesStoredPerDay, 24e12);
        QCOMPARE(*e.bytesOfferedPerDay, 28.8e12);
        QCOMPARE(*e.driveWritesPerDay, 1.5625);
        QCOMPARE(*e.yearsToRatedEndurance, 3.2);
        QVERIFY2(e.warning.find("short of the 5-year warranty") != std::string::npos,
                 e.warning.c_str());
        QVERIFY(e.note.empty());
    }

    // Mixed use: 3 DWPD for 5 years of 6.4 TB drives, 12.8 TB of capacity (exactly 2 drives),
    // 2 TB stored in a day: 3 × 5 × 12.8 / 2 = 96 years; no warning.
    void mixedUseOutlastsItsWarranty() {
        const auto e = tierEndurance(tier(12.8e12, 2e12, 2e12), drive(3, 5, 6.4), 86400);
        QCOMPARE(*e.drives, std::int64_t(2));
        QCOMPARE(*e.driveWritesPerDay, 2.0 / 12.8);
        QCOMPARE(*e.yearsToRatedEndurance, 96.0);
        QVERIFY(e.warning.empty());
    }

    void figuresMissingSayWhy_data() {
        QTest::addColumn<double>("capacity");
        QTest::addColumn<bool>("rated");
        QTest::addColumn<double>("stored");
        QTest::addColumn<double>("duration");
        QTest::addColumn<QString>("note");
        QTest::newRow("DRAM") << 512e9 << false << 1e12 << 3600.0 << "no drive rating";
        QTest::newRow("unlimited")
            << kUnlimited << true << 1e12 << 3600.0 << "unlimited capacity: no drive count";
        QTest::newRow("no writes")
            << 8e12 << true << 0.0 << 3600.0 << "no writes: the rated endurance is never used";
        QTest::newRow("no time") << 8e12 << true << 1e12 << 0.0
                                 << "the trace spans no time: no rate per day";
        QTest::newRow("no capacity") << 0.0 << true << 0.0 << 3600.0 << "no capacity: no drives";
    }
    void figuresMissingSayWhy() {
        QFETCH(double, capacity);
        QFETCH(bool, rated);
        QFETCH(double, stored);
        QFETCH(double, duration);
        QFETCH(QString, note);
        const auto e = tierEndurance(tier(capacity, stored, stored),
                                     rated ? drive(1, 5, 7.68) : DriveRating{}, duration);
        QVERIFY(!e.yearsToRatedEndurance);
        QCOMPARE(QString::fromStdString(e.note), note);
        QVERIFY(e.warning.empty());
    }

    // The presets carry both classes: nvme-gen5 read-intensive (1 DWPD, 5 years, 7.68 TB) and
    // nvme-gen5-mu mixed use (3 DWPD, 5 years, 6.4 TB), each with its source; DRAM none.
    void presetsCarryTheDriveRatings() {
        const auto& p = kvbe::test::presets();
        const auto* ri = p.findTier("nvme-gen5");
        const auto* mu = p.findTier("nvme-gen5-mu");
        const auto* dram = p.findTier("dram-pcie5");
        QVERIFY(ri && mu && dram);
        QCOMPARE(*ri->drive.writesPerDay, 1.0);
        QCOMPARE(*ri->drive.warrantyYears, 5.0);
        QCOMPARE(*ri->drive.capacityBytes, 7.68e12);
        QCOMPARE(*mu->drive.writesPerDay, 3.0);
        QCOMPARE(*mu->drive.capacityBytes, 6.4e12);
        QVERIFY(ri->sources.count("endurance") && mu->sources.count("endurance"));
        QVERIFY(!dram->drive.rated());
        QVERIFY(!p.findTier("nvme-gen4")->drive.rated()); // its warranty term is not sourced
    }

    // A scenario tier overrides each drive figure of its preset, and saves them.
    void scenarioTiersOverrideTheRating() {
        const auto& p = kvbe::test::presets();
        const char* text = R"({"kvbe_scenario": 1, "model": "meta-llama/Llama-3.2-3B",
            "gpu": "h100-sxm", "tiers": [{"preset": "nvme-gen5", "drive_writes_per_day": 3,
            "warranty_years": 3, "drive_capacity_TB": 3.84, "drive_model": "ours"}]})";
        auto s = scenarioFromJson(text, "t.kvbe.json", p);
        QVERIFY2(s.ok(), s.ok() ? "" : s.message().c_str());
        const auto& d = s->tiers[0].drive;
        QCOMPARE(*d.writesPerDay, 3.0);
        QCOMPARE(*d.warrantyYears, 3.0);
        QCOMPARE(*d.capacityBytes, 3.84e12);
        QCOMPARE(QString::fromStdString(d.model), QString("ours"));
        auto again = scenarioFromJson(scenarioToJson(*s), "again.kvbe.json", p);
        QVERIFY(again.ok());
        QCOMPARE(again->tiers[0].drive, d);
        // Only the warranty given: the preset's other figures stay.
        auto partial = scenarioFromJson(R"({"kvbe_scenario": 1, "tiers": [{"preset":
            "nvme-gen4", "warranty_years": 5}]})",
                                        "p.kvbe.json", p);
        QVERIFY(partial.ok());
        QVERIFY(partial->tiers[0].drive.rated());
        QCOMPARE(*partial->tiers[0].drive.writesPerDay, 1.3);
    }

    void badDriveFieldsNameTheField_data() {
        QTest::addColumn<QString>("field");
        QTest::addColumn<QString>("value");
        QTest::newRow("negative DWPD") << "drive_writes_per_day"
                                       << "-1";
        QTest::newRow("zero warranty") << "warranty_years"
                                       << "0";
        QTest::newRow("text capacity") << "drive_capacity_TB"
                                       << "\"big\"";
    }
    void badDriveFieldsNameTheField() {
        QFETCH(QString, field);
        QFETCH(QString, value);
        const QString text = QString(R"({"kvbe_scenario": 1, "tiers": [{"preset": "nvme-gen5",
            "%1": %2}]})")
                                 .arg(field, value);
        auto s = scenarioFromJson(text.toStdString(), "bad.kvbe.json", kvbe::test::presets());
        QVERIFY(!s.ok());
        QVERIFY2(s.message().find("tiers[0]." + field.toStdString()) != std::string::npos,
                 s.message().c_str());
    }
};

QTEST_GUILESS_MAIN(TestEndurance)
#include "tst_endurance.moc"
