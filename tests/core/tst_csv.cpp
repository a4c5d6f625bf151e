// CSV both ways (kvbe/base/csv.h): fields quoted only where they must be, and rows read back with
// quoted separators, doubled quotes, line breaks inside quotes, CRLF and the line each row starts
// on.
#include "kvbe/base/csv.h"

#include <QTest>

using namespace kvbe;

class TestCsv : public QObject {
    Q_OBJECT
  private slots:
    void fieldsQuotedWhereTheyMustBe_data() {
        QTest::addColumn<QString>("in");
        QTest::addColumn<QString>("out");
        QTest::newRow("plain") << "NVMe"
                               << "NVMe";
        QTest::newRow("comma") << "NVMe, PCIe 5"
                               << "\"NVMe, PCIe 5\"";
        QTest::newRow("quote") << "the \"fast\" one"
                               << "\"the \"\"fast\"\" one\"";
        QTest::newRow("newline") << "a\nb"
                                 << "\"a\nb\"";
    }
    void fieldsQuotedWhereTheyMustBe() {
        QFETCH(QString, in);
        QFETCH(QString, out);
        QCOMPARE(QString::fromStdString(csvField(in.toStdString())), out);
    }

    void writtenRowsReadBack() {
        const std::vector<std::string> cells{"tier", "NVMe, PCIe 5", "say \"hi\"", "two\nlines",
                                             ""};
        const std::string text = csvLine({"a", "b", "c", "d", "e"}) + csvLine(cells);
        const auto rows = readCsv(text);
        QCOMPARE(rows.size(), size_t(2));
        QCOMPARE(rows[1].cells, cells);
        QCOMPARE(rows[1].line, size_t(2));
    }

    void separatorsLinesAndBlankLines() {
        const auto rows = readCsv("tokens;seconds\r\n\r\n8k\t0.61\r\n\"16,384\";1.5\r\n", ",;\t");
        QCOMPARE(rows.size(), size_t(3));
        QCOMPARE(rows[0].cells, (std::vector<std::string>{"tokens", "seconds"}));
        QCOMPARE(rows[1].cells, (std::vector<std::string>{"8k", "0.61"}));
        QCOMPARE(rows[1].line, size_t(3));
        QCOMPARE(rows[2].cells, (std::vector<std::string>{"16,384", "1.5"}));
        QCOMPARE(rows[2].line, size_t(4));
    }
};

QTEST_GUILESS_MAIN(TestCsv)
#include "tst_csv.moc"
