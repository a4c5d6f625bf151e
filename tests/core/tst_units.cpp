#include "kvbe/base/allocator.h"
#include "kvbe/base/chunked_column.h"
#include "kvbe/base/json_text.h"
#include "kvbe/base/statistics.h"
#include "kvbe/base/units.h"
#include "sanitizer_build.h"

#include <QTest>

#if defined(__GLIBC__)
#include <malloc.h>
#endif

using namespace kvbe;

class TestUnits : public QObject {
    Q_OBJECT
  private slots:
    // The rank-sum test's p against the orderings counted by hand: 3 against 3 fully apart is
    // 2 of the C(6,3) = 20 orderings (U = 0 or 9); 5 against 5, 2 of C(10,5) = 252; {1,3,5}
    // against {2,4,6} has U = 3, and U <= 3 or U >= 6 covers 14 of the 20 orderings (U counts
    // 1,1,2,3,3,3,3,2,1,1 for U = 0..9).
    void rankSumPValueCountsOrderings() {
        const std::vector<double> lo3{1, 2, 3}, hi3{4, 5, 6}, lo5{1, 2, 3, 4, 5},
            hi5{6, 7, 8, 9, 10}, odd{1, 3, 5}, even{2, 4, 6};
        QCOMPARE(kvbe::rankSumPValue(lo3, hi3), 2.0 / 20);
        QCOMPARE(kvbe::rankSumPValue(hi3, lo3), 2.0 / 20);
        QCOMPARE(kvbe::rankSumPValue(lo5, hi5), 2.0 / 252);
        QCOMPARE(kvbe::rankSumPValue(odd, even), 14.0 / 20);
        QCOMPARE(kvbe::rankSumPValue(lo3, {}), 1.0);
        // Above 60 samples, the normal approximation: 31 against 31 fully apart is far below
        // 1e-10 (exactly 2 / C(62, 31), about 1.8e-18).
        std::vector<double> a, b;
        for (int i = 0; i < 31; ++i) {
            a.push_back(i);
            b.push_back(100 + i);
        }
        QVERIFY(kvbe::rankSumPValue(a, b) < 1e-10);
        QCOMPARE(kvbe::rankSumPValue(a, a), 1.0);
    }
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
    // Every kind of quantity a flag takes, one parser each: binary prefixes are binary and
    // decimal ones decimal, so 1GB is 1e9 bytes wherever a size is typed.
    void wholeBytes_data() {
        QTest::addColumn<QString>("text");
        QTest::addColumn<qulonglong>("expected");
        QTest::newRow("GB is 1e9") << "1GB" << qulonglong(1000000000);
        QTest::newRow("MB is 1e6") << "28MB" << qulonglong(28000000);
        QTest::newRow("kB is 1e3") << "64kB" << qulonglong(64000);
        QTest::newRow("GiB") << "1GiB" << qulonglong(1) * 1024 * 1024 * 1024;
        QTest::newRow("bare k is KiB") << "64k" << qulonglong(65536);
        QTest::newRow("fractional GiB") << "1.5GiB" << qulonglong(3) * 512 * 1024 * 1024;
    }
    void wholeBytes() {
        QFETCH(QString, text);
        QFETCH(qulonglong, expected);
        auto r = parseWholeBytes(text.toStdString());
        QVERIFY2(r.ok(), r.ok() ? "" : r.message().c_str());
        QCOMPARE(qulonglong(*r), expected);
        QVERIFY(!parseWholeBytes("1.5").ok()); // half a byte
        QVERIFY(!parseWholeBytes("0").ok());
        auto list = parseWholeByteList("64KiB,1GB");
        QVERIFY(list.ok() && list->size() == 2 && (*list)[1] == 1000000000u);
    }
    void counts() {
        QCOMPARE(*parseCount("32", 1, 1024), std::int64_t(32));
        QCOMPARE(*parseCount("1k", 1, 1024), std::int64_t(1024));
        QCOMPARE(*parseCount("1e3", 1, 1024), std::int64_t(1000));
        for (const char* bad : {"0", "1025", "2.5", "lots", "4q", ""}) {
            auto r = parseCount(bad, 1, 1024);
            QVERIFY2(!r.ok(), bad);
            QVERIFY2(r.message().find("1 to 1024") != std::string::npos, r.message().c_str());
        }
        auto list = parseCountList("1,4,32", 1, 1024);
        QVERIFY(list.ok() && *list == (std::vector<std::int64_t>{1, 4, 32}));
    }
    void tokensTakeTheirWordAndM() {
        QCOMPARE(*parseTokens("3e6tokens"), 3e6);
        QCOMPARE(*parseTokens("8k tokens"), 8192.0);
        QCOMPARE(*parseTokens("1m"), 1048576.0);
        QCOMPARE(*parseTokens("1e12"), 1e12);
        QVERIFY(!parseTokens("1e16").ok()); // past 2^53
    }
    void capacities_data() {
        QTest::addColumn<QString>("text");
        QTest::addColumn<int>("unit");
        QTest::addColumn<double>("value");
        const int bytes = int(Capacity::Unit::Bytes), blocks = int(Capacity::Unit::Blocks),
                  tokens = int(Capacity::Unit::Tokens), unlimited = int(Capacity::Unit::Unlimited);
        QTest::newRow("GiB") << "512GiB" << bytes << 512.0 * 1024 * 1024 * 1024;
        QTest::newRow("TB") << "8TB" << bytes << 8e12;
        QTest::newRow("bare bytes") << "4096" << bytes << 4096.0;
        QTest::newRow("zero") << "0" << bytes << 0.0;
        QTest::newRow("blocks") << "6000blocks" << blocks << 6000.0;
        QTest::newRow("tokens") << "3.07e6tokens" << tokens << 3.07e6;
        QTest::newRow("unlimited") << "unlimited" << unlimited << 0.0;
        QTest::newRow("inf") << "inf" << unlimited << 0.0;
    }
    void capacities() {
        QFETCH(QString, text);
        QFETCH(int, unit);
        QFETCH(double, value);
        auto r = parseCapacity(text.toStdString());
        QVERIFY2(r.ok(), r.ok() ? "" : r.message().c_str());
        QCOMPARE(int(r->unit), unit);
        QCOMPARE(r->value, value);
        for (const char* bad : {"lots", "-3blocks", "blocks", "8 parsecs", "-1GB"})
            QVERIFY2(!parseCapacity(bad).ok(), bad);
    }
    void bandwidths() {
        QCOMPARE(*parseBandwidthGBps("13.5"), 13.5);
        QCOMPARE(*parseBandwidthGBps("13.5GB/s"), 13.5);
        QCOMPARE(*parseBandwidthGBps("500 MB/s"), 0.5);
        QCOMPARE(*parseBandwidthGBps("1TB/s"), 1000.0);
        for (const char* bad : {"0", "-2", "fast", "2e6", "13.5GiB"}) {
            auto r = parseBandwidthGBps(bad);
            QVERIFY2(!r.ok(), bad);
            QVERIFY2(r.message().find("GB/s") != std::string::npos, r.message().c_str());
        }
    }
    void fractions() {
        QCOMPARE(*parseFraction("0.5"), 0.5);
        QCOMPARE(*parseFraction("50%"), 0.5);
        QCOMPARE(*parseFraction("0"), 0.0);
        QCOMPARE(*parseFraction("1"), 1.0);
        QVERIFY(!parseFraction("0", false).ok());
        QVERIFY(parseFraction("1.2").message().find("from 0 to 1") != std::string::npos);
        QVERIFY(parseFraction("0", false).message().find("(0, 1]") != std::string::npos);
        for (const char* bad : {"150%", "-0.1", "half", "0.5x"})
            QVERIFY2(!parseFraction(bad).ok(), bad);
        auto list = parseFractionList("0.1,50%,1", false);
        QVERIFY(list.ok() && *list == (std::vector<double>{0.1, 0.5, 1}));
    }
    void plainNumbers() {
        QCOMPARE(*parseNumber("989"), 989.0);
        QCOMPARE(*parseNumber(" 2.27 "), 2.27);
        QCOMPARE(*parseNumber("+1e-3"), 1e-3);
        for (const char* bad : {"", "2.27x", "0x10", "nan", "inf", "1,5"})
            QVERIFY2(!parseNumber(bad).ok(), bad);
    }
    void seconds() {
        QCOMPARE(*parseSeconds("5s"), 5.0);
        QCOMPARE(*parseSeconds("500ms"), 0.5);
        QCOMPARE(*parseSeconds("2min"), 120.0);
        QVERIFY(!parseSeconds("-1s").ok());
        QVERIFY(!parseSeconds("0").ok());
        QCOMPARE(*parseSecondsOrZero("0"), 0.0);
        QCOMPARE(*parseSecondsOrZero("0ms"), 0.0);
        QCOMPARE(*parseSecondsOrZero("250ms"), 0.25);
        QVERIFY(!parseSecondsOrZero("-1s").ok());
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

    // A trace's columns as read: in chunks (here of 16 bytes, 4 values), joined in order into a
    // vector of exactly their size, the column empty after; one chunk or none the same.
    void chunkedColumnsJoinInOrder() {
        // uint32 chunks of 8 bytes first (2 values), doubling to 32 bytes (8 values): 2, 4, 8,
        // 8, ... values, so n values take these chunks (counted by hand).
        const std::pair<std::uint32_t, std::size_t> cases[] = {{0, 0},  {1, 1},  {2, 1},  {3, 2},
                                                               {6, 2},  {7, 3},  {14, 3}, {15, 4},
                                                               {22, 4}, {23, 5}, {30, 5}, {31, 6}};
        for (auto [n, chunks] : cases) {
            kvbe::ChunkedColumn<std::uint32_t, 32, 8> c;
            for (std::uint32_t i = 0; i < n; ++i)
                c.push_back(i * 7 + 1);
            QCOMPARE(c.size(), std::size_t(n));
            QCOMPARE(c.chunks(), chunks);
            const std::vector<std::uint32_t> v = c.join();
            QCOMPARE(v.size(), std::size_t(n));
            QCOMPARE(v.capacity(), std::size_t(n));
            for (std::uint32_t i = 0; i < n; ++i)
                QCOMPARE(v[i], i * 7 + 1);
            QCOMPARE(c.size(), std::size_t(0));
            QCOMPARE(c.chunks(), std::size_t(0));
        }
    }

    // A column costs what it holds: one value reserves the first chunk (4 KiB), not the 64 MiB
    // of a full one, and a column of a million reserves less than twice what it holds.
    void chunkedColumnsReserveWhatTheyHold() {
        kvbe::ChunkedColumn<std::uint64_t> one;
        one.push_back(7);
        QCOMPARE(one.reserved() * sizeof(std::uint64_t), std::size_t(4096));
        kvbe::ChunkedColumn<std::uint64_t> many;
        for (std::uint64_t i = 0; i < 1'000'000; ++i)
            many.push_back(i);
        QVERIFY(many.reserved() >= 1'000'000);
        QVERIFY(many.reserved() < 2'000'000);
        // A chunk never exceeds the largest: 2^21 values of 8 bytes fill 16 MiB chunks only.
        kvbe::ChunkedColumn<std::uint64_t, (16u << 20)> capped;
        for (std::uint64_t i = 0; i < (std::uint64_t(5) << 21); ++i)
            capped.push_back(i);
        QVERIFY(capped.reserved() <= (std::size_t(5) << 21) + (std::size_t(2) << 21));
        const auto v = capped.join();
        QCOMPARE(v.size(), std::size_t(5) << 21);
        QCOMPARE(v.back(), (std::uint64_t(5) << 21) - 1);
    }

    // After returnLargeFreesToTheSystem, an array of 1 MiB or more is a mapping of its own even
    // after a larger one was freed; glibc alone would have raised its threshold past 2 MiB on
    // that free and taken the next array from its arena, keeping the pages when freed.
    void largeArraysAreMappedOnTheirOwn() {
#if !defined(__GLIBC__)
        QSKIP("glibc's malloc only");
#else
        if (kvbe::test::kAddressSanitizer)
            QSKIP("glibc's malloc only (sanitizers bring their own allocator)");
        QVERIFY(kvbe::returnLargeFreesToTheSystem());
        constexpr std::size_t kBig = 8u << 20, kSmaller = 2u << 20;
        void* big = std::malloc(kBig);
        QVERIFY(big);
        static_cast<volatile char*>(big)[0] = 1;
        std::free(big);
        const std::size_t before = mallinfo2().hblkhd; // bytes in mappings of their own
        void* smaller = std::malloc(kSmaller);
        QVERIFY(smaller);
        QVERIFY(mallinfo2().hblkhd >= before + kSmaller);
        std::free(smaller);
        QCOMPARE(mallinfo2().hblkhd, before);
#endif
    }
};

QTEST_GUILESS_MAIN(TestUnits)
#include "tst_units.moc"
