#include "kvbe/base/json_text.h"

#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <set>
#include <sstream>
#include <vector>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace kvbe {

namespace {
// Depth check before nlohmann's recursive parser sees the text. Strings are skipped so that
// brackets inside them do not count.
bool nestingWithin(std::string_view text, int limit) {
    int depth = 0;
    bool inString = false;
    for (size_t i = 0; i < text.size(); ++i) {
        const char c = text[i];
        if (inString) {
            if (c == '\\')
                ++i;
            else if (c == '"')
                inString = false;
            continue;
        }
        if (c == '"')
            inString = true;
        else if (c == '[' || c == '{') {
            if (++depth > limit) return false;
        } else if (c == ']' || c == '}')
            --depth;
    }
    return true;
}
} // namespace

nlohmann::json jsonCount(double v) {
    if (!std::isfinite(v)) return nullptr;
    if (std::floor(v) == v && std::abs(v) <= 9007199254740992.0)
        return static_cast<std::int64_t>(v);
    return v;
}

std::string dumpJson(const nlohmann::json& j, int indent) {
    return j.dump(indent, ' ', false, nlohmann::json::error_handler_t::replace);
}

bool isValidUtf8(std::string_view text) {
    size_t i = 0;
    while (i < text.size()) {
        const auto c = static_cast<unsigned char>(text[i]);
        size_t extra = 0;
        unsigned min = 0;
        if (c < 0x80) {
            ++i;
            continue;
        }
        if ((c & 0xE0) == 0xC0) {
            extra = 1;
            min = 0x80;
        } else if ((c & 0xF0) == 0xE0) {
            extra = 2;
            min = 0x800;
        } else if ((c & 0xF8) == 0xF0) {
            extra = 3;
            min = 0x10000;
        } else
            return false;
        if (i + extra >= text.size()) return false; // cut off
        unsigned cp = c & (0x3F >> extra);
        for (size_t k = 1; k <= extra; ++k) {
            const auto cc = static_cast<unsigned char>(text[i + k]);
            if ((cc & 0xC0) != 0x80) return false;
            cp = (cp << 6) | (cc & 0x3F);
        }
        // Overlong forms, UTF-16 surrogates and code points past U+10FFFF are not UTF-8.
        if (cp < min || (cp >= 0xD800 && cp <= 0xDFFF) || cp > 0x10FFFF) return false;
        i += extra + 1;
    }
    return true;
}

std::string jsonTypeName(const nlohmann::json& j) {
    switch (j.type()) {
    case nlohmann::json::value_t::null:
        return "null";
    case nlohmann::json::value_t::object:
        return "an object";
    case nlohmann::json::value_t::array:
        return "an array";
    case nlohmann::json::value_t::string:
        return "a string";
    case nlohmann::json::value_t::boolean:
        return "a boolean";
    case nlohmann::json::value_t::binary:
        return "binary data";
    case nlohmann::json::value_t::discarded:
        return "nothing";
    default:
        return "a number";
    }
}

Result<nlohmann::json> parseJsonText(std::string_view text, const std::string& source) {
    if (text.find_first_not_of(" \t\r\n") == std::string_view::npos)
        return Error{source + ": the file is empty; expected a JSON object"};
    if (!nestingWithin(text, kMaxJsonDepth))
        return Error{source + ": JSON nested deeper than " + std::to_string(kMaxJsonDepth) +
                     " levels; this is not a file kvbe reads"};
    // Duplicate keys: JSON allows them, but which one wins is up to the reader, so a file
    // with two "hidden_size" fields would give a silently arbitrary answer. Refuse it.
    std::vector<std::set<std::string>> keys;
    std::string duplicate;
    auto callback = [&](int depth, nlohmann::json::parse_event_t event, nlohmann::json& parsed) {
        (void)depth;
        using E = nlohmann::json::parse_event_t;
        if (event == E::object_start)
            keys.emplace_back();
        else if (event == E::object_end) {
            if (!keys.empty()) keys.pop_back();
        } else if (event == E::key && !keys.empty()) {
            const auto k = parsed.get<std::string>();
            if (!keys.back().insert(k).second && duplicate.empty()) duplicate = k;
        }
        return true;
    };
    try {
        auto j = nlohmann::json::parse(text.begin(), text.end(), callback);
        if (!duplicate.empty())
            return Error{source + ": the key \"" + duplicate +
                         "\" appears twice in one object; expected each key once"};
        return j;
    } catch (const nlohmann::json::exception& e) {
        std::string what = e.what();
        // "[json.exception.parse_error.101] parse error at line 1, column 2: ..." -> after "]"
        if (auto pos = what.find("] "); pos != std::string::npos) what = what.substr(pos + 2);
        // The parser quotes what it last read, which may be binary or broken UTF-8: keep the
        // message printable.
        for (auto& c : what)
            if (static_cast<unsigned char>(c) < 0x20 || static_cast<unsigned char>(c) >= 0x7f)
                c = '?';
        return Error{source + ": not valid JSON: " + what};
    }
}

Result<std::string> readTextFile(const std::filesystem::path& path, std::uintmax_t maxBytes) {
    std::error_code ec;
    const auto status = std::filesystem::status(path, ec);
    if (ec || !std::filesystem::exists(status)) return Error{path.string() + ": no such file"};
    if (std::filesystem::is_directory(status))
        return Error{path.string() + ": is a folder; expected a file"};
    if (!std::filesystem::is_regular_file(status))
        return Error{path.string() + ": is not a regular file"};
    const auto size = std::filesystem::file_size(path, ec);
    if (!ec && size > maxBytes)
        return Error{path.string() + ": the file is " + std::to_string(size / (1024 * 1024)) +
                     " MiB; expected at most " + std::to_string(maxBytes / (1024 * 1024)) + " MiB"};
    std::ifstream in(path, std::ios::binary);
    if (!in) return Error{path.string() + ": cannot be read (" + std::strerror(errno) + ")"};
    std::ostringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

Status writeFileAtomically(const std::filesystem::path& path, std::string_view contents) {
    const auto dir = path.has_parent_path() ? path.parent_path() : std::filesystem::path(".");
    std::string tmpl = (dir / ("." + path.filename().string() + ".XXXXXX")).string();
    std::vector<char> name(tmpl.begin(), tmpl.end());
    name.push_back('\0');
    const int fd = ::mkstemp(name.data());
    if (fd < 0)
        return Error{path.string() + ": cannot write in " + dir.string() + " (" +
                     std::strerror(errno) + ")"};
    size_t done = 0;
    while (done < contents.size()) {
        const auto n = ::write(fd, contents.data() + done, contents.size() - done);
        if (n < 0) {
            if (errno == EINTR) continue;
            const std::string why = std::strerror(errno);
            ::close(fd);
            ::unlink(name.data());
            return Error{path.string() + ": write failed (" + why + ")"};
        }
        done += static_cast<size_t>(n);
    }
    ::fchmod(fd, 0644);
    if (::fsync(fd) != 0 || ::close(fd) != 0) {
        const std::string why = std::strerror(errno);
        ::unlink(name.data());
        return Error{path.string() + ": write failed (" + why + ")"};
    }
    if (std::rename(name.data(), path.c_str()) != 0) {
        const std::string why = std::strerror(errno);
        ::unlink(name.data());
        return Error{path.string() + ": cannot replace the file (" + why + ")"};
    }
    return Ok{};
}

} // namespace kvbe
