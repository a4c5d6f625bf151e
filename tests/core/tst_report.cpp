// The sign-off report's content (kvbe/report/report.h), without a layout: where each tier value is
// said to come from (a preset, the user, or a fit of measured transfers naming the calibration
// file they came from), the risks each raised by its cause and only by it, the reproduction's
// shell quoting and hashes, and the sections a trace adds.
#include "kvbe/report/report.h"
#include "kvbe/scenario/scenario.h"

#include <QTest>

#include <algorithm>

using namespace kvbe;

namespace {

const Presets& presets() {
    static const Presets p = [] {
        auto r = Presets::loadBuiltin();
        if (!r) qFatal("%s", r.message().c_str());
        return std::move(*r);
    }();
    return p;
}

Evaluation evaluated(const Scenario& s) {
    auto e = evaluate(s, presets());
    if (!e) qFatal("%s", e.message().c_str());
    return std::move(*e);
}

Scenario defaults() {
    auto s = defaultScenario(presets());
    if (!s) qFatal("%s", s.message().c_str());
    return std::move(*s);
}

// Every text of a section: paragraphs, list items, table cells.
std::string textOf(const ReportSection& s) {
    std::string t;
    for (const auto& b : s.blocks) {
        t += b.text + "\n";
        for (const auto& i : b.items)
            t += i + "\n";
        for (const auto& row : b.table.rows)
            for (const auto& c : row)
                t += c + "\n";
    }
    return t;
}

bool has(const std::vector<std::string>& lines, const std::string& start) {
    return std::any_of(lines.begin(), lines.end(),
                       [&](const std::string& l) { return l.rfind(start, 0) == 0; });
}

// The row of the scenario section's tier table for a tier.
std::vector<std::string> tierRow(const ReportSection& s, const std::string& tier) {
    for (const auto& b : s.blocks)
        if (b.kind == ReportBlock::Kind::Table && !b.table.header.empty() &&
            b.table.header.front() == "Tier")
            for (const auto& row : b.table.rows)
                if (row.front() == tier) return row;
    return {};
}

} // namespace

class TestReport : public QObject {
    Q_OBJECT
  private slots:
    // A tier as its preset has it says the preset and the preset's source; one whose bandwidth
    // was changed says the scenario it was set in.
    void tierFromPresetOrUser() {
        Scenario s = defaults();
        s.tiers = {tierFromPreset(*presets().findTier("dram-pcie5")),
                   tierFromPreset(*presets().findTier("nvme-gen5"))};
        s.tiers[1].bandwidthGBps = 20;
        const Evaluation e = evaluated(s);
        ReportInputs in;
        in.eval = &e;
        in.presets = &presets();
        in.scenarioFile = "mine.kvbe.json";
        const ReportSection sec = reportScenarioSection(in);
        const auto dram = tierRow(sec, s.tiers[0].name);
        QVERIFY(!dram.empty());
        QVERIFY2(dram.back().rfind("preset " + s.tiers[0].preset + "; bandwidth: ", 0) == 0,
                 dram.back().c_str());
        const auto changed = tierRow(sec, s.tiers[1].name);
        QVERIFY2(
            changed.back().rfind("set in mine.kvbe.json over preset " + s.tiers[1].preset, 0) == 0,
            changed.back().c_str());
        QCOMPARE(changed[1], std::string("20.0 GB/s")); // not staged
    }

    // A tier with measured transfers names the imported calibration file whose reads they are,
    // and the fit: (1 MB, 1.1 ms) and (1 GB, 81 ms) give B = 999 MB / 79.9 ms = 12.5 GB/s and
    // t_fixed = 1.1 ms − 1 MB / B = 1.02 ms. Without the file it names the scenario.
    void measuredTierNamesItsFile() {
        Scenario s = defaults();
        s.tiers.resize(1);
        s.tiers[0].name = "node NVMe";
        s.tiers[0].preset.clear();
        s.tiers[0].staging = Staging::None;
        s.tiers[0].measured = {{1e6, 0.0011}, {1e9, 0.081}};
        const Evaluation e = evaluated(s);
        Calibration c;
        c.source = "node17.json";
        TierMeasurement m;
        m.name = "nvme";
        m.reads = {{1e6, 0.0011}, {1e9, 0.081}};
        c.tiers.push_back(m);
        ReportInputs in;
        in.eval = &e;
        in.presets = &presets();
        in.calibrations.push_back(c);
        const std::string text = textOf(reportScenarioSection(in));
        QVERIFY2(text.find("fitted from 2 measured transfers of node17.json (tier 'nvme')") !=
                     std::string::npos,
                 text.c_str());
        QVERIFY(text.find("gives B = 12.5 GB/s, t_fixed = 1.02 ms") != std::string::npos);
        in.calibrations.clear();
        const std::string alone = textOf(reportScenarioSection(in));
        QVERIFY(alone.find("fitted from 2 measured transfers in the built-in default scenario") !=
                std::string::npos);
    }

    // Figure 1's caption names the published figures only where the chart draws some: the
    // default scenario (Llama 3.2 3B on an H100, the py-kvcache study's node) has them; Llama
    // 3.3 70B on an H200 with FP8 KV has none, and its caption named them.
    void captionNamesPublishedFiguresOnlyWhereDrawn() {
        auto caption = [](const Scenario& s) {
            const Evaluation e = evaluated(s);
            ReportInputs in;
            in.eval = &e;
            in.presets = &presets();
            for (const auto& b : reportBreakevenSection(in).blocks)
                if (b.kind == ReportBlock::Kind::Figure && b.chart == "breakeven") return b.text;
            return std::string();
        };
        const std::string named = "and the published figures for this model and GPU";
        QVERIFY(caption(defaults()).find(named) != std::string::npos);
        Scenario big = defaults();
        big.model = "meta-llama/Llama-3.3-70B-Instruct";
        big.gpu = "h200";
        big.kvDtype = KvDtype::FP8;
        const std::string c = caption(big);
        QVERIFY2(!c.empty() && c.find(named) == std::string::npos, c.c_str());
        QVERIFY(c.find("with each tier's bandwidth.") != std::string::npos);
    }

    // Risks: drives worn out within warranty, a bandwidth-bound tier and example prices, each
    // from its cause; a configuration that wears nothing out and real prices raise none of them.
    void risksFromTheirCauses() {
        const Evaluation e = evaluated(defaults());
        PlanPoint p;
        p.drive = "nvme-gen5-mu";
        p.drives = 2;
        PlanTier t;
        t.name = "nvme-gen5-mu";
        t.endurance.drive.warrantyYears = 5;
        t.endurance.drive.writesPerDay = 3;
        t.endurance.drive.capacityBytes = 6.4e12;
        t.endurance.yearsToRatedEndurance = 0.76;
        p.tiers.push_back(t);
        p.bandwidthBound = true;
        p.saturation = "nvme-gen5-mu is saturated in 3 % of the minutes.";
        PlanResult r;
        r.points = {p};
        r.front = {0};
        r.recommended = 0;
        PlanSetup setup;
        setup.prices.example = true;
        setup.prices.origin = "resources/prices.json";
        ReportInputs in;
        in.eval = &e;
        in.presets = &presets();
        in.plan = &r;
        in.planSetup = &setup;
        auto risks = reportRisks(in);
        QVERIFY(has(risks, "Drive wear: the recommended nvme-gen5-mu's drives reach their rated "
                           "endurance in 0.76 years, within their 5-year warranty."));
        QVERIFY(has(risks, "Drive wear: 1 configuration(s) on the front"));
        QVERIFY(has(risks, "Saturated tier: in the recommended configuration nvme-gen5-mu is "
                           "saturated"));
        QVERIFY(has(risks, "Example prices:"));
        // Store admission, with the ordinal in words: "2nd", not "2th".
        r.points[0].storeAfter = 2;
        r.points[0].lifeIfEveryBlockStored = 1.5;
        QVERIFY(has(reportRisks(in), "Store admission: a serving stack that stores every block "
                                     "instead of from the 2nd sighting wears these drives out"));
        r.points[0].storeAfter = 1;
        r.points[0].lifeIfEveryBlockStored.reset();

        r.points[0].tiers[0].endurance.yearsToRatedEndurance = 6;
        r.points[0].bandwidthBound = false;
        setup.prices.example = false;
        risks = reportRisks(in);
        QCOMPARE(risks.size(), std::size_t(1));
        QVERIFY(has(risks, "None found"));
    }

    // Words a shell would split or expand are quoted; one flag a line with backslashes.
    // A fleet's plan: the section names the fleet as trace plan's `fleet` line does, and the
    // purchase reads per node.
    void aFleetsPurchaseIsPerNode() {
        PlanSetup s;
        s.base.instances = 4;
        s.base.fleet.enabled = true;
        s.base.fleet.nodeServers = 2;
        s.prices.origin = "example";
        PlanResult r;
        r.fleetServers = 4;
        r.fleetNodes = 2;
        r.fleetRouter = "sglang";
        PlanPoint p;
        p.drive = "nvme-gen5";
        p.drives = 2;
        p.nodes = 2; // bought for each (PlanPoint::nodes)
        p.tiers = {PlanTier{"nvme-gen5", 12.8e12, 0, 0, {}}};
        r.points = {PlanPoint{}, p};
        r.recommended = 1;
        r.why = "why";
        ReportInputs in;
        in.planSetup = &s;
        in.plan = &r;
        const ReportSection sec = reportPlanSection(in);
        QStringList texts;
        for (const auto& b : sec.blocks)
            texts << QString::fromStdString(b.text);
        QVERIFY2(texts.contains(QStringLiteral(
                     "Fleet: 4 servers on 2 nodes (2 a node) behind sglang, a GPU cache each: "
                     "every DRAM size and drive count is a node's, every cost is for the 2 "
                     "nodes.")),
                 qPrintable(texts.join('\n')));
        QVERIFY2(texts.contains(QStringLiteral(
                     "Recommended: on each of the 2 nodes, 2 x nvme-gen5, store every block.")),
                 qPrintable(texts.join('\n')));
    }

    void shellQuoting() {
        QCOMPARE(shellWord("traces/a.jsonl"), std::string("traces/a.jsonl"));
        QCOMPARE(shellWord("my trace.jsonl"), std::string("'my trace.jsonl'"));
        QCOMPARE(shellWord("it's"), std::string("'it'\\''s'"));
        QCOMPARE(shellWord(""), std::string("''"));
        QCOMPARE(shellCommandLines({"kvbe-cli", "report", "--out", "a b.pdf"}),
                 std::string("kvbe-cli report \\\n  --out 'a b.pdf'"));
    }

    // The sections: a scenario report has no workload or plan; a trace adds both, and the
    // reproduction lists each file as sha256sum writes it.
    void sectionsAndHashes() {
        const Evaluation e = evaluated(defaults());
        ReportInputs in;
        in.eval = &e;
        in.presets = &presets();
        in.command = {"kvbe-cli", "report", "--out", "r.pdf"};
        in.files = {{"s.kvbe.json", "scenario (--scenario)", std::string(64, 'a')}};
        const Report r = buildReport(in);
        std::vector<std::string> titles;
        for (const auto& s : r.sections)
            titles.push_back(s.title);
        QCOMPARE(titles, (std::vector<std::string>{"Summary", "The scenario", "Break-even", "Risks",
                                                   "How to reproduce it"}));
        QCOMPARE(r.figures().size(), std::size_t(4));
        const std::string repro = textOf(r.sections.back());
        QVERIFY(repro.find(std::string(64, 'a') + "  s.kvbe.json") != std::string::npos);
        QVERIFY(repro.find("kvbe-cli report \\\n  --out r.pdf") != std::string::npos);

        // A prompt of 1 token and one of 4·10⁹: every p* between them, so each tier that pays
        // at all has half the requests at or above its p*.
        Trace trace;
        trace.summary.blockTokens = 512;
        trace.inputTokens = {1, 4000000000u};
        trace.arrivalS = {0, 1};
        in.trace = &trace;
        in.traceFile = "t.jsonl";
        in.planError = "no plan";
        const Report t = buildReport(in);
        QCOMPARE(t.sections.size(), std::size_t(7));
        QCOMPARE(t.sections[3].title, std::string("The workload"));
        const std::string workload = textOf(t.sections[3]);
        std::size_t paying = 0, half = 0;
        for (const auto& tier : e.tiers)
            if (auto pStar = e.cost.breakevenPrefix(tier); pStar && *pStar > 1) ++paying;
        for (std::size_t at = 0; (at = workload.find(" tokens\n50 %\n", at)) != std::string::npos;
             ++at)
            ++half;
        QVERIFY(paying > 0);
        QCOMPARE(half, paying);
        QVERIFY(textOf(t.sections[4]).find("No plan: no plan") != std::string::npos);
    }
};

QTEST_GUILESS_MAIN(TestReport)
#include "tst_report.moc"
