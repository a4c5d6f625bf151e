// Kinds as types (issue 36): the tier kind and the calibration format, each with one parser and
// one name; the one tier-name synonym rule the calibration fits, the published figures and
// py-kvcache's export share; the one lower().
#include "kvbe/base/text.h"
#include "kvbe/files/file_kind.h"
#include "kvbe/scenario/hardware.h"
#include "kvbe/scenario/presets.h"

#include <QTest>

using namespace kvbe;

class TestKinds : public QObject {
    Q_OBJECT
  private slots:
    void tierKindParsesAndNamesItself() {
        for (auto k : {TierKind::Dram, TierKind::Nvme, TierKind::Network})
            QVERIFY(parseTierKind(toString(k)) == k);
        QVERIFY(parseTierKind("NVMe") == TierKind::Nvme);
        QVERIFY(!parseTierKind("ssd"));   // a synonym of a name, not a kind
        QVERIFY(!parseTierKind("nvme ")); // no trimming: the file says what it says
        QVERIFY(!parseTierKind(""));
    }

    // A preset of an unknown kind is refused naming the file and the field; one without a kind
    // has none (its tier is neither DRAM nor NVMe to the plan).
    void badTierKindNamesTheFileAndField() {
        const char* bad = R"({"tiers": {"tape": {"name": "Tape", "kind": "tape",
            "read_GBps": 1, "write_GBps": 1, "t_fixed_ms": 5}}})";
        auto r = parseTierPresets(bad, "my-tiers.json");
        QVERIFY(!r.ok());
        const std::string m = r.message();
        QVERIFY2(m.find("my-tiers.json") != std::string::npos, m.c_str());
        QVERIFY2(m.find("tiers.tape.kind") != std::string::npos, m.c_str());
        QVERIFY2(m.find("dram, nvme or network") != std::string::npos, m.c_str());
        const char* none = R"({"tiers": {"x": {"name": "X", "read_GBps": 1, "write_GBps": 1,
            "t_fixed_ms": 5}}})";
        auto n = parseTierPresets(none, "x.json");
        QVERIFY2(n.ok(), n.ok() ? "" : n.message().c_str());
        QVERIFY(!n->at("x").kind);
        // The shipped presets all have one.
        auto builtin = Presets::loadBuiltin();
        QVERIFY(builtin.ok());
        for (const auto& [key, spec] : builtin->tiers())
            QVERIFY2(spec.kind.has_value(), key.c_str());
        QVERIFY(builtin->findTier("nvme-gen5")->kind == TierKind::Nvme);
        QVERIFY(builtin->findTier("dram-pcie5")->kind == TierKind::Dram);
    }

    // The one synonym rule: the words of each kind, in any case, and a tier name that contains
    // one (the two copies it replaces disagreed on "disk" and "cpu").
    void oneSynonymRule() {
        for (const char* w : {"ssd", "nvme", "disk", "SSD", "Disk"})
            QVERIFY2(tierKindOfWord(w) == TierKind::Nvme, w);
        for (const char* w : {"mem", "dram", "cpu", "DRAM"})
            QVERIFY2(tierKindOfWord(w) == TierKind::Dram, w);
        QVERIFY(!tierKindOfWord("network"));
        QVERIFY(!tierKindOfWord("nvme-gen5"));
        QVERIFY(nameSuggestsKind("Local NVMe (Gen5)", TierKind::Nvme));
        QVERIFY(nameSuggestsKind("scratch disk", TierKind::Nvme));
        QVERIFY(nameSuggestsKind("Host DRAM (PCIe 5.0)", TierKind::Dram));
        QVERIFY(nameSuggestsKind("CPU pinned", TierKind::Dram));
        QVERIFY(!nameSuggestsKind("Network store (100 GbE)", TierKind::Nvme));
        QVERIFY(!nameSuggestsKind("Network store (100 GbE)", TierKind::Dram));
        QVERIFY(!nameSuggestsKind("Host DRAM", TierKind::Nvme));
        QVERIFY(!nameSuggestsKind("anything", TierKind::Network));
    }

    void calibrationFormatParsesAndNamesItself() {
        for (auto f :
             {CalibrationFormat::Kvbe, CalibrationFormat::PyKvcacheV1,
              CalibrationFormat::PyKvcacheV2, CalibrationFormat::PyKvcache,
              CalibrationFormat::ParetoCsv, CalibrationFormat::Fio, CalibrationFormat::Nvbandwidth})
            QVERIFY(parseCalibrationFormat(toString(f)) == f);
        QVERIFY(!parseCalibrationFormat("fi0"));
        QVERIFY(!parseCalibrationFormat(""));
        QVERIFY(isPyKvcache(CalibrationFormat::PyKvcacheV1));
        QVERIFY(isPyKvcache(CalibrationFormat::PyKvcacheV2));
        QVERIFY(isPyKvcache(CalibrationFormat::PyKvcache));
        QVERIFY(!isPyKvcache(CalibrationFormat::Fio));
    }

    void oneLower() {
        QCOMPARE(lower("NVMe Gen5 µs"), std::string("nvme gen5 µs"));
        QCOMPARE(lower(""), std::string());
    }
};

QTEST_GUILESS_MAIN(TestKinds)
#include "tst_kinds.moc"
