#include "kvbe/ui/fleet/calibration_importer.h"

#include "kvbe/files/file_kind.h"
#include "kvbe/ui/results/scenario_result.h"

#include <QThread>

#include <algorithm>

namespace kvbe {

namespace {
constexpr int kCurveColumns = 500;

std::vector<QPointF> thinPrefill(const std::vector<PrefillSample>& samples) {
    std::vector<QPointF> pts;
    pts.reserve(samples.size());
    for (const auto& s : samples)
        if (s.tokens > 0 && s.seconds > 0) pts.emplace_back(s.tokens, s.seconds);
    std::sort(pts.begin(), pts.end(),
              [](const QPointF& a, const QPointF& b) { return a.x() < b.x(); });
    if (pts.size() <= 2 * kCurveColumns) return pts;
    return decimateToColumns(pts, kCurveColumns, pts.front().x(), pts.back().x(), true);
}

// Measured hits (the TTFT of the whole prompt) and golden points (their recompute time f).
std::vector<QPointF> hitPoints(const Calibration& c) {
    constexpr size_t kMaxPoints = 4000;
    std::vector<QPointF> pts;
    const size_t total = c.hits.size() + c.golden.size();
    const size_t stride = total > kMaxPoints ? (total + kMaxPoints - 1) / kMaxPoints : 1;
    for (size_t i = 0; i < c.hits.size(); i += stride)
        pts.emplace_back(c.hits[i].tokens, c.hits[i].seconds);
    for (const auto& g : c.golden)
        if (g.tokens > 0 && g.f > 0) pts.emplace_back(g.tokens, g.f);
    return pts;
}
} // namespace

CalibrationImporter::CalibrationImporter(QObject* parent) : QObject(parent) {}

CalibrationImporter::~CalibrationImporter() {
    if (!m_thread) return;
    m_stop = true;
    m_thread->wait();
    delete m_thread;
}

CalibrationImporter::Files CalibrationImporter::expand(const QStringList& paths) {
    std::vector<std::filesystem::path> in;
    for (const QString& p : paths)
        in.emplace_back(p.toStdString());
    const auto list = filesToRead(in, FileKind::Calibration);
    Files out;
    for (const auto& f : list.files)
        out.files << QString::fromStdString(f.string());
    for (const auto& e : list.errors)
        out.errors << QString::fromStdString(e);
    return out;
}

Result<ImportedCalibration> CalibrationImporter::read(const QString& path) {
    auto c = readCalibration(path.toStdString());
    if (!c) return c.error();
    ImportedCalibration ic;
    ic.prefillCurve = thinPrefill(c->prefill);
    ic.hitPoints = hitPoints(*c);
    ic.calibration = std::move(*c);
    return ic;
}

bool CalibrationImporter::start(const QStringList& paths) {
    if (m_thread) return false;
    m_stop = false;
    const Files list = expand(paths);
    const QStringList files = list.files;
    auto out = std::make_shared<std::vector<ImportedCalibration>>();
    // A folder without calibration files says so, among the files that could not be read.
    auto errors = std::make_shared<QStringList>(list.errors);
    m_thread = QThread::create([this, files, out, errors] {
        for (int i = 0; i < files.size() && !m_stop; ++i) {
            QMetaObject::invokeMethod(
                this, [this, i, n = int(files.size()), f = files[i]] { emit progress(i, n, f); },
                Qt::QueuedConnection);
            if (auto ic = read(files[i]))
                out->push_back(std::move(*ic));
            else
                *errors << QString::fromStdString(ic.message());
        }
    });
    connect(m_thread, &QThread::finished, this, [this, out, errors, n = int(files.size())] {
        m_thread->deleteLater();
        m_thread = nullptr;
        emit progress(n, n, QString());
        emit finished(out, *errors);
    });
    m_thread->start();
    return true;
}

} // namespace kvbe
