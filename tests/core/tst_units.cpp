#include "kvbe/base/json_text.h"
#include "kvbe/base/units.h"

#include <QTest>

using namespace kvbe;

class TestUnits : public QObject {
    Q_OBJECT
  private slots:
    void tokens_data() {
        QTest::addColumn<QString>("text");
        QTest::addColumn<double>("expected");
        QTest::newRow("plain") << "8192" << 8192.0;
        QTest::newRow("k is 1024") << "8k" << 8192.0;
        QTest::newRow("80k") << "80k" << 81920.0;
        QTest::newRow("fractional k") << "1.5k" << 1536.0;
        QTest::newRow("spaces") << " 32768 " << 32768.0;
    }
    void tokens() {
        QFETCH(QString, text);
        QFETCH(double, expected);
        auto r = parseTokens(text.toStdString());
        QVERIFY2(r.ok(), r.ok() ? "" : r.message().c_str());
        QCOMPARE(*r, expected);
    }
    void badTokensAreRefusedWithAReason_data() {
        QTest::addColumn<QString>("text");
        QTest::newRow("empty") << "";
        QTest::newRow("word") << "lots";
        QTest::newRow("zero") << "0";
        QTest::newRow("negative") << "-5";
        QTest::newRow("unknown unit") << "8q";
        QTest::newRow("nan") << "nan";
        QTest::newRow("inf") << "inf";
    }
    void badTokensAreRefusedWithAReason() {
        QFETCH(QString, text);
        auto r = parseTokens(text.toStdString());
        QVERIFY(!r.ok());
        QVERIFY(!r.message().empty());
    }
    void tokenList() {
        auto r = parseTokenList("1024,8k,80k");
        QVERIFY(r.ok());
        QCOMPARE(*r, (std::vector<double>{1024, 8192, 81920}));
        QVERIFY(!parseTokenList("1024,,8k").ok());
    }
    void bytes_data() {
        QTest::addColumn<QString>("text");
        QTest::addColumn<double>("expected");
        QTest::newRow("KiB") << "128KiB" << 131072.0;
        QTest::newRow("MiB") << "28MiB" << 29360128.0;
        QTest::newRow("GiB") << "4GiB" << 4294967296.0;
        QTest::newRow("GB is 1e9") << "1GB" << 1e9;
        QTest::newRow("plain bytes") << "4096" << 4096.0;
    }
    void bytes() {
        QFETCH(QString, text);
        QFETCH(double, expected);
        auto r = parseBytes(text.toStdString());
        QVERIFY(r.ok());
        QCOMPARE(*r, expected);
    }
    void seconds() {
        QCOMPARE(*parseSeconds("5s"), 5.0);
        QCOMPARE(*parseSeconds("500ms"), 0.5);
        QCOMPARE(*parseSeconds("2min"), 120.0);
        QVERIFY(!parseSeconds("-1s").ok());
        QVERIFY(!parseSeconds("5 parsecs").ok());
    }
    void paramCounts() {
        QCOMPARE(*parseParamCount("3.21e9"), 3.21e9);
        QCOMPARE(*parseParamCount("70B"), 70e9);
        QCOMPARE(*parseParamCount(" 350m "), 350e6);
        QCOMPARE(*parseParamCount("1.2T"), 1.2e12);
        for (const char* bad : {"", "seventy", "70Q", "0", "-3B", "2e16"}) {
            auto r = parseParamCount(bad);
            QVERIFY2(!r.ok(), bad);
            QVERIFY2(r.message().find("parameter count") != std::string::npos ||
                         r.message().find("unknown unit") != std::string::npos,
                     r.message().c_str());
        }
    }
    void utf8Validation_data() {
        QTest::addColumn<QByteArray>("text");
        QTest::addColumn<bool>("valid");
        QTest::newRow("ascii") << QByteArray("ssd") << true;
        QTest::newRow("two bytes") << QByteArray("\xc3\xbc") << true;          // ü
        QTest::newRow("four bytes") << QByteArray("\xf0\x9f\x9a\x80") << true; // U+1F680
        QTest::newRow("lone continuation") << QByteArray("\xb5sd") << false;
        QTest::newRow("cut off") << QByteArray("ab\xe2\x82") << false;
        QTest::newRow("overlong") << QByteArray("\xc0\xaf") << false;
        QTest::newRow("surrogate") << QByteArray("\xed\xa0\x80") << false;
        QTest::newRow("past U+10FFFF") << QByteArray("\xf4\x90\x80\x80") << false;
    }
    void utf8Validation() {
        QFETCH(QByteArray, text);
        QFETCH(bool, valid);
        QCOMPARE(
            kvbe::isValidUtf8(std::string_view(text.constData(), static_cast<size_t>(text.size()))),
            valid);
    }
    void dumpNeverThrows() {
        const nlohmann::json j = std::string("\xb5sd");
        QCOMPARE(kvbe::dumpJson(j), std::string("\"\xef\xbf\xbdsd\""));
    }

    void formatting() {
        QCOMPARE(formatTokens(8192), std::string("8,192"));
        QCOMPARE(formatTokens(131072), std::string("131,072"));
        QCOMPARE(formatBandwidth(7.2437e9), std::string("7.24 GB/s"));
        QCOMPARE(formatBandwidth(13.5e9), std::string("13.5 GB/s"));
        QCOMPARE(formatBandwidth(2.5e6), std::string("2.5 MB/s")); // not "0.00 GB/s"
        QCOMPARE(formatSeconds(0.1297), std::string("130 ms"));
    }
};

QTEST_GUILESS_MAIN(TestUnits)
#include "tst_units.moc"
