#include "kvbe/base/text.h"

#include <cctype>

namespace kvbe {

std::string lower(std::string_view text) {
    std::string out(text);
    for (auto& c : out)
        c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return out;
}

} // namespace kvbe
