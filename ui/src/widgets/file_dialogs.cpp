#include "kvbe/ui/widgets/file_dialogs.h"

#include <QFileInfo>
#include <QStringList>

namespace kvbe {

namespace {

QString patterns(std::initializer_list<FileKind> kinds) {
    QStringList out;
    for (FileKind k : kinds)
        for (std::string_view ext : fileKindInfo(k).extensions) {
            const QString p =
                QLatin1Char('*') + QString::fromUtf8(ext.data(), qsizetype(ext.size()));
            if (!out.contains(p)) out << p;
        }
    return out.join(QLatin1Char(' '));
}

QString label(FileKind k) {
    const std::string_view l = fileKindInfo(k).label;
    return QString::fromUtf8(l.data(), qsizetype(l.size()));
}

} // namespace

QString fileDialogFilter(std::initializer_list<FileKind> kinds) {
    QStringList entries;
    if (kinds.size() > 1) {
        QStringList labels;
        for (FileKind k : kinds)
            labels << (labels.isEmpty() ? label(k) : label(k).toLower());
        entries << QStringLiteral("%1 (%2)").arg(labels.join(QStringLiteral(" and ")),
                                                 patterns(kinds));
    }
    for (FileKind k : kinds)
        entries << QStringLiteral("%1 (%2)").arg(label(k), patterns({k}));
    entries << QObject::tr("All files (*)");
    return entries.join(QStringLiteral(";;"));
}

bool mayDrop(const QString& path) {
    if (QFileInfo(path).isDir()) return true;
    const std::filesystem::path p = path.toStdString();
    for (const auto& k : fileKinds())
        if (k.kind != FileKind::PrefillTable && hasExtensionOf(p, k.kind)) return true;
    return false;
}

} // namespace kvbe
