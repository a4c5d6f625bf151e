// kvbe: the desktop explorer, and headless chart export for scripts and the README.
#include "kvbe/base/allocator.h"
#include "kvbe/base/exit_code.h"
#include "kvbe/files/trace_format.h"
#include "kvbe/scenario/presets.h"
#include "kvbe/scenario/scenario.h"
#include "kvbe/ui/charts/chart_export.h"
#include "kvbe/ui/window/headless_export.h"
#include "kvbe/ui/window/main_window.h"
#include "kvbe/ui/workload/capacity_panel.h"
#include "kvbe/ui/workload/workload_view.h"

#include <QApplication>
#include <QCommandLineParser>
#include <QStringList>

#include <cstdio>

namespace {

// Prints the sentence on stderr and returns the exit code for it: bad input unless said otherwise
// (the codes are kvbe-cli's, kvbe/base/exit_code.h).
int printError(const QString& sentence, kvbe::ExitCode code = kvbe::ExitCode::BadInput) {
    std::fprintf(stderr, "kvbe: %s\n", sentence.toLocal8Bit().constData());
    return kvbe::exitCode(code);
}

} // namespace

int main(int argc, char** argv) {
    kvbe::returnLargeFreesToTheSystem();
    QCoreApplication::setOrganizationName(QStringLiteral("kvbe"));
    QCoreApplication::setApplicationName(QStringLiteral("kvbe"));
    QCoreApplication::setApplicationVersion(QStringLiteral(KVBE_VERSION));

    QCommandLineParser parser;
    parser.setApplicationDescription(QStringLiteral("KV offload break-even explorer"));
    parser.addHelpOption();
    parser.addVersionOption();
    const QCommandLineOption scenarioOpt(QStringLiteral("scenario"),
                                         QStringLiteral("Scenario file (.kvbe.json) to open."),
                                         QStringLiteral("FILE"));
    const QCommandLineOption chartOpt(QStringLiteral("chart"), kvbe::chartOptionHelp(),
                                      QStringLiteral("NAME"), QStringLiteral("breakeven"));
    const QCommandLineOption exportOpt(
        QStringLiteral("export"),
        QStringLiteral("Render the chart to OUT (.png, .svg or .pdf) and exit."),
        QStringLiteral("OUT"));
    const QCommandLineOption sizeOpt(QStringLiteral("size"),
                                     QStringLiteral("Export size in pixels (PDF: points)."),
                                     QStringLiteral("WxH"), QStringLiteral("1600x900"));
    const QCommandLineOption tierOpt(QStringLiteral("tier"), kvbe::tierOptionHelp(),
                                     QStringLiteral("N"), QStringLiteral("1"));
    const QCommandLineOption darkOpt(QStringLiteral("dark"), QStringLiteral("Dark theme."));
    const QCommandLineOption bigOpt(QStringLiteral("presentation"),
                                    QStringLiteral("Large fonts and lines."));
    const QCommandLineOption importOpt(
        QStringLiteral("import"),
        QStringLiteral("Import calibration files, or every file in a folder, into the Fleet view "
                       "(repeatable); with --export, drawn on the exported chart."),
        QStringLiteral("PATH"));
    const QCommandLineOption traceOpt(
        QStringLiteral("trace"),
        QStringLiteral("A request trace (%1, .gz, .zst) to open in the Workload view, or to "
                       "draw with --export and a workload chart.")
            .arg(QString::fromStdString(kvbe::traceFormatsSentence())),
        QStringLiteral("FILE"));
    const QCommandLineOption sloOpt(QStringLiteral("slo"), kvbe::targetOptionHelp(),
                                    QStringLiteral("TARGET"));
    const QCommandLineOption liveOpt(
        QStringLiteral("live"),
        QStringLiteral("A live replay of the trace (the folder kvbe-cli probe replay --out wrote) "
                       "to draw beside the model's prediction: the workload-live chart, or the "
                       "Workload view's Live tab."),
        QStringLiteral("DIR"));
    const QCommandLineOption engineOpt(
        QStringLiteral("engine"),
        QStringLiteral("The engine's own cache to model on the live replay, as kvbe-cli trace "
                       "replay --engine takes it: llama.cpp[:cache_ram=SIZE,similarity=F]."),
        QStringLiteral("SPEC"));
    const QCommandLineOption asRoutedOpt(
        QStringLiteral("as-routed"),
        QStringLiteral("With --live: replay each request on the server the live run sent it to, "
                       "as kvbe-cli trace replay --as-routed does."));
    parser.addOptions({scenarioOpt, chartOpt, exportOpt, sizeOpt, tierOpt, darkOpt, bigOpt,
                       importOpt, traceOpt, sloOpt, liveOpt, engineOpt, asRoutedOpt});
    parser.addPositionalArgument(QStringLiteral("file"),
                                 QStringLiteral("A scenario or a model's config.json to open."));
    // Parsed before QApplication exists: a mistyped option must fail with a sentence even where
    // no display could be opened, and the platform depends on --export.
    QStringList args;
    for (int i = 0; i < argc; ++i)
        args << QString::fromLocal8Bit(argv[i]);
    // An unknown option or a missing value is a usage error, as in kvbe-cli.
    if (!parser.parse(args)) return printError(parser.errorText(), kvbe::ExitCode::Usage);
    const bool exporting = parser.isSet(exportOpt);

    // An export needs no display; without one the default platform would abort.
    if (exporting && qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM") &&
        qEnvironmentVariableIsEmpty("DISPLAY") && qEnvironmentVariableIsEmpty("WAYLAND_DISPLAY"))
        qputenv("QT_QPA_PLATFORM", "offscreen");
    // Offscreen Qt warns about things that do not matter for a file (window hints, runtime
    // dirs); an export keeps stderr for the one sentence that says why it failed.
    if (exporting)
        qInstallMessageHandler([](QtMsgType type, const QMessageLogContext&, const QString& msg) {
            if (type == QtCriticalMsg || type == QtFatalMsg)
                std::fprintf(stderr, "kvbe: %s\n", msg.toLocal8Bit().constData());
        });

    // Help and version need no display either: a plain core application prints them.
    if (parser.isSet(QStringLiteral("help")) || parser.isSet(QStringLiteral("version"))) {
        QCoreApplication core(argc, argv);
        if (parser.isSet(QStringLiteral("version"))) parser.showVersion();
        parser.showHelp(0);
    }

    // Without a display Qt would abort with a long note about plugins; one sentence instead.
    const bool noDisplay = qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM") &&
                           qEnvironmentVariableIsEmpty("DISPLAY") &&
                           qEnvironmentVariableIsEmpty("WAYLAND_DISPLAY");
    if (!exporting && noDisplay)
        return printError(
            QStringLiteral("no display to open the window on (DISPLAY and WAYLAND_DISPLAY are "
                           "unset); use --export OUT.png to render a chart to a file"));

    QApplication app(argc, argv);

    auto presets = kvbe::Presets::loadBuiltin();
    if (!presets) return printError(QString::fromStdString(presets.message()));

    if (parser.isSet(exportOpt)) {
        kvbe::HeadlessExport request;
        request.chart = parser.value(chartOpt);
        request.path = parser.value(exportOpt);
        const auto size = kvbe::parseExportSize(parser.value(sizeOpt));
        if (!size)
            return printError(
                QStringLiteral("--size must look like 1600x900, from 16 to 16384 pixels a side"));
        request.size = *size;
        if (parser.isSet(tierOpt)) {
            bool ok = false;
            const int tier = parser.value(tierOpt).toInt(&ok);
            if (!ok || tier < 1)
                return printError(QStringLiteral("--tier must be a tier number, from 1"));
            request.tier = tier - 1;
        }
        request.style.dark = parser.isSet(darkOpt);
        request.style.presentation = parser.isSet(bigOpt);
        request.imports = parser.values(importOpt);
        request.trace = parser.value(traceOpt);
        request.target = parser.value(sloOpt);
        request.live = parser.value(liveOpt);
        request.engine = parser.value(engineOpt);
        request.asRouted = parser.isSet(asRoutedOpt);
        auto scenario = parser.isSet(scenarioOpt)
                            ? kvbe::loadScenario(parser.value(scenarioOpt).toStdString(), *presets)
                            : kvbe::defaultScenario(*presets);
        if (!scenario) return printError(QString::fromStdString(scenario.message()));
        if (auto st = kvbe::exportHeadless(*presets, *scenario, request); !st)
            return printError(QString::fromStdString(st.message()));
        return kvbe::exitCode(kvbe::ExitCode::Ok);
    }

    kvbe::MainWindow window(std::move(*presets));
    QString file = parser.value(scenarioOpt);
    if (file.isEmpty() && !parser.positionalArguments().isEmpty())
        file = parser.positionalArguments().front();
    if (!file.isEmpty())
        if (auto st = window.openFile(file); !st)
            return printError(QString::fromStdString(st.message()));
    if (parser.isSet(importOpt)) window.importCalibrations(parser.values(importOpt));
    if (parser.isSet(traceOpt)) window.openTrace(parser.value(traceOpt));
    // The Live tab's folder and engine (a sentence on its chart where they cannot be read).
    if (parser.isSet(liveOpt) || parser.isSet(engineOpt) || parser.isSet(asRoutedOpt))
        if (auto* workload = window.findChild<kvbe::WorkloadView*>())
            workload->setLiveReplay(parser.value(liveOpt), parser.value(engineOpt),
                                    parser.isSet(asRoutedOpt));
    // The Capacity tab's target field (a sentence there where it does not parse).
    if (parser.isSet(sloOpt))
        if (auto* capacity = window.findChild<kvbe::CapacityPanel*>())
            capacity->setTargetText(parser.value(sloOpt));
    // The window sized itself for the screen (or kept the last session's layout where it fits).
    window.show();
    return app.exec();
}
