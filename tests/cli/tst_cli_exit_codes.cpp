// Exit codes, one list for every command of kvbe-cli and kvbe (kvbe/base/exit_code.h): a usage
// error is 2 in both binaries, bad input 1, and an exception that escapes a command is an
// internal error with its own code and a sentence saying it is a bug.
#include "cli_run.h"

#include "kvbe/base/exit_code.h"

#include <QProcess>
#include <QTest>
#include <sstream>
#include <stdexcept>

namespace {

// kvbe with arguments; no display is needed to refuse an option.
kvbe::test::CliRun runGui(const QStringList& args) {
#ifdef KVBE_GUI_PATH
    auto env = QProcessEnvironment::systemEnvironment();
    env.insert(QStringLiteral("QT_QPA_PLATFORM"), QStringLiteral("offscreen"));
    return kvbe::test::runProgram(QStringLiteral(KVBE_GUI_PATH), args, env, 60000);
#else
    Q_UNUSED(args);
    return {};
#endif
}

} // namespace

class TestCliExitCodes : public QObject {
    Q_OBJECT
  private slots:
    void usageErrorsAreTwoInKvbeCli_data() {
        QTest::addColumn<QStringList>("args");
        QTest::newRow("unknown flag") << QStringList{"calc", "--warp", "9"};
        QTest::newRow("unknown command") << QStringList{"warp"};
        QTest::newRow("no command") << QStringList{};
        QTest::newRow("trace without its command") << QStringList{"trace"};
        QTest::newRow("value outside the choices") << QStringList{"calc", "--format", "xml"};
    }
    void usageErrorsAreTwoInKvbeCli() {
        QFETCH(QStringList, args);
        const auto r = kvbe::test::runCli(args);
        QCOMPARE(r.status, QProcess::NormalExit);
        QCOMPARE(r.exitCode, kvbe::exitCode(kvbe::ExitCode::Usage));
        QCOMPARE(r.exitCode, 2);
    }

    // The explorer's options are refused as kvbe-cli's are: 2, with the reason.
    void usageErrorsAreTwoInKvbe() {
#ifndef KVBE_GUI_PATH
        QSKIP("kvbe (the explorer) is not built here");
#endif
        auto r = runGui({"--warp"});
        QCOMPARE(r.status, QProcess::NormalExit);
        QCOMPARE(r.exitCode, 2);
        QVERIFY2(r.err.contains("warp"), r.err.constData());
        r = runGui({"--chart"}); // missing value
        QCOMPARE(r.exitCode, 2);
        // Bad input stays 1: a size that is not WxH.
        r = runGui({"--export", "/tmp/kvbe-exit-code-test.png", "--size", "huge"});
        QCOMPARE(r.exitCode, 1);
        QVERIFY2(r.err.contains("--size"), r.err.constData());
    }

    void badInputIsOne() {
        const auto r = kvbe::test::runCli({"calc", "--util", "2"});
        QCOMPARE(r.exitCode, 1);
    }

    // What main runs every command through: an exception that escapes is an internal error,
    // told apart from bad input, with one sentence that says it is a bug.
    void anEscapingExceptionIsAnInternalError() {
        std::ostringstream err;
        const auto code = kvbe::runGuarded(
            "kvbe-cli",
            []() -> kvbe::ExitCode { throw std::runtime_error("vector::_M_range_check"); }, err);
        QCOMPARE(code, kvbe::ExitCode::Internal);
        QCOMPARE(kvbe::exitCode(code), 70);
        QVERIFY(kvbe::exitCode(code) != kvbe::exitCode(kvbe::ExitCode::BadInput));
        const std::string text = err.str();
        QCOMPARE(text, std::string("kvbe-cli: internal error (a bug in kvbe; please report it with "
                                   "the command line): vector::_M_range_check\n"));
        // A command's own codes pass through, and nothing is printed for them.
        std::ostringstream quiet;
        QCOMPARE(kvbe::runGuarded(
                     "kvbe-cli", [] { return kvbe::ExitCode::BadInput; }, quiet),
                 kvbe::ExitCode::BadInput);
        QCOMPARE(kvbe::runGuarded(
                     "kvbe-cli", [] { return kvbe::ExitCode::Ok; }, quiet),
                 kvbe::ExitCode::Ok);
        QVERIFY(quiet.str().empty());
    }

    // One list: every code reads back, has its sentences, and --help lists it.
    void everyCodeHasItsSentences() {
        const auto help = kvbe::test::runCli({"--help"});
        QCOMPARE(help.exitCode, 0);
        for (auto e : {kvbe::ExitCode::Ok, kvbe::ExitCode::BadInput, kvbe::ExitCode::Usage,
                       kvbe::ExitCode::CannotRun, kvbe::ExitCode::Failed, kvbe::ExitCode::Internal,
                       kvbe::ExitCode::Stopped}) {
            QCOMPARE(kvbe::exitCodeFromInt(kvbe::exitCode(e)), std::optional<kvbe::ExitCode>(e));
            QVERIFY(!kvbe::exitCodeSentence(e).empty());
            const std::string meaning(kvbe::exitCodeMeaning(e));
            QVERIFY(kvbe::exitCodeHelp().find(meaning) != std::string::npos);
            QVERIFY2(help.out.contains(QByteArray::fromStdString(meaning)), help.out.constData());
        }
        QVERIFY(std::string(kvbe::exitCodeMeaning(kvbe::ExitCode::Internal)).find("bug") !=
                std::string::npos);
        QVERIFY(!kvbe::exitCodeFromInt(7));
    }
};

QTEST_GUILESS_MAIN(TestCliExitCodes)
#include "tst_cli_exit_codes.moc"
