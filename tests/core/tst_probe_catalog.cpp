// The probe catalog holds together (keys and flags unique, choices with their defaults, groups
// and the window's rows consistent), and ProbeArgs reads given values, defaults and numbers.
#include "kvbe/probe/probe_catalog.h"

#include <QtTest>

#include <set>

using namespace kvbe;

class TestProbeCatalog : public QObject {
    Q_OBJECT
  private slots:
    void keysAndFlagsAreUnique() {
        std::set<std::string_view> keys;
        for (const auto& p : probeCatalog()) {
            QVERIFY2(keys.insert(p.key).second, p.key.data());
            QVERIFY(!p.title.empty() && !p.description.empty() && !p.needs.empty());
            QCOMPARE(findProbe(p.key), &p);
            std::set<std::string_view> flags;
            for (const auto& o : p.options) {
                QVERIFY2(o.flag.substr(0, 2) == "--", o.flag.data());
                QVERIFY2(flags.insert(o.flag).second, o.flag.data());
                QVERIFY2(o.flag != "--format", "--format is every probe's, added by kvbe-cli");
                QVERIFY2(!o.help.empty(), o.flag.data());
                QCOMPARE(p.option(o.flag), &o);
            }
        }
        QVERIFY(findProbe("gpu-gemm-peak"));
        QVERIFY(!findProbe("gpu-gemm"));
    }

    void choicesGroupsAndRowsAreConsistent() {
        for (const auto& p : probeCatalog())
            for (const auto& o : p.options) {
                const std::string where = std::string(p.key) + " " + std::string(o.flag);
                if (o.kind == ProbeOptionKind::Choice) {
                    QVERIFY2(!o.choices.empty(), where.c_str());
                    if (!o.defaultValue.empty())
                        QVERIFY2(std::find(o.choices.begin(), o.choices.end(), o.defaultValue) !=
                                     o.choices.end(),
                                 where.c_str());
                } else {
                    QVERIFY2(o.choices.empty(), where.c_str());
                }
                // A flag is off unless given; a required option has no default to fall back on.
                if (o.kind == ProbeOptionKind::Flag || o.required)
                    QVERIFY2(o.defaultValue.empty(), where.c_str());
                if (!o.onlyWith.empty()) {
                    const ProbeOption* owner = p.option(o.onlyWith);
                    QVERIFY2(owner && !owner->group.empty() && owner->inWindow(), where.c_str());
                }
            }
    }

    void argsReadGivenValuesAndDefaults() {
        const ProbeDescription* read = findProbe("nvme-read");
        QVERIFY(read);
        ProbeArgs a(*read);
        QVERIFY(!a.given("--duration"));
        QCOMPARE(a.text("--duration"), std::string("5s"));
        QCOMPARE(a.text("--block-sizes"), std::string()); // the probe decides
        QCOMPARE(a.text("--no-such-flag"), std::string());
        QVERIFY(!a.on("--buffered"));
        a.set("--duration", "200ms");
        a.set("--buffered", "true");
        QVERIFY(a.given("--duration"));
        QCOMPARE(a.text("--duration"), std::string("200ms"));
        QVERIFY(a.on("--buffered"));
    }

    void argsReadNumbers_data() {
        QTest::addColumn<QString>("text");
        QTest::addColumn<bool>("isCount");
        QTest::addColumn<double>("expected");
        QTest::newRow("count") << "12" << true << 12.0;
        QTest::newRow("negative count") << "-1" << true << -1.0;
        QTest::newRow("number") << "0.25" << false << 0.25;
        QTest::newRow("count not whole") << "2.5" << true << qQNaN();
        QTest::newRow("count with text") << "3x" << true << qQNaN();
        QTest::newRow("number empty") << "" << false << qQNaN();
    }
    void argsReadNumbers() {
        QFETCH(QString, text);
        QFETCH(bool, isCount);
        QFETCH(double, expected);
        const ProbeDescription* serving = findProbe("serving");
        QVERIFY(serving);
        ProbeArgs a(*serving);
        const std::string flag = isCount ? "--repeats" : "--peak-tflops";
        a.set(flag, text.toStdString());
        if (isCount) {
            auto v = a.count(flag);
            QCOMPARE(bool(v), !qIsNaN(expected));
            if (v)
                QCOMPARE(double(*v), expected);
            else
                QVERIFY2(v.message().find("--repeats") != std::string::npos, v.message().c_str());
        } else {
            auto v = a.number(flag);
            QCOMPARE(bool(v), !qIsNaN(expected));
            if (v)
                QCOMPARE(*v, expected);
            else
                QVERIFY(v.message().find("--peak-tflops") != std::string::npos);
        }
    }
};

QTEST_GUILESS_MAIN(TestProbeCatalog)
#include "tst_probe_catalog.moc"
