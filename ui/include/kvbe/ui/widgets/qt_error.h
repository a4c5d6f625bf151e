// A failure whose sentence was written with Qt's strings (tr, arg): core's Error
// (kvbe/base/result.h) holds it as UTF-8.
#pragma once

#include "kvbe/base/result.h"

#include <QString>

namespace kvbe {

inline Error fail(const QString& sentence) {
    return Error{sentence.toStdString()};
}

} // namespace kvbe
