// File dialogs' filters and what a drop may hold, from core's table of file kinds
// (kvbe/files/file_kind.h): no dialog keeps a list of extensions of its own.
#pragma once

#include "kvbe/files/file_kind.h"

#include <QString>

#include <initializer_list>

namespace kvbe {

// "Calibrations (*.json *.csv);;All files (*)"; for several kinds an entry for them all first,
// then one for each.
QString fileDialogFilter(std::initializer_list<FileKind> kinds);
// Whether a path dropped on the window may be read: a folder, or a name with an extension of a
// kind that its content tells (classifyFile decides once it is dropped).
bool mayDrop(const QString& path);

} // namespace kvbe
