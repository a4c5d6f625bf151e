#include "trace_sources.h"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <vector>

#ifdef KVBE_HAVE_ZLIB
#include <zlib.h>
#endif
#ifdef KVBE_HAVE_ZSTD
#include <zstd.h>
#endif

namespace kvbe::detail {
namespace {

class PlainFile final : public TraceSource {
  public:
    PlainFile(std::FILE* f, std::uint64_t size) : m_f(f), m_size(size) {}
    ~PlainFile() override { std::fclose(m_f); }
    long read(char* buf, std::size_t n) override {
        const std::size_t got = std::fread(buf, 1, n, m_f);
        if (got == 0 && std::ferror(m_f)) return -1;
        m_read += got;
        return static_cast<long>(got);
    }
    double fraction() const override {
        return m_size ? std::min(1.0, double(m_read) / double(m_size)) : 1.0;
    }
    std::size_t chunkBytes() const override {
        return static_cast<std::size_t>(
            std::clamp<std::uint64_t>(m_size + 1, 64u << 10, kTraceChunk));
    }

  private:
    std::FILE* m_f;
    std::uint64_t m_size, m_read = 0;
};

#ifdef KVBE_HAVE_ZLIB
class GzFile final : public TraceSource {
  public:
    GzFile(gzFile f, std::uint64_t size) : m_f(f), m_size(size) {}
    ~GzFile() override { gzclose(m_f); }
    long read(char* buf, std::size_t n) override {
        const int got = gzread(m_f, buf, static_cast<unsigned>(n));
        return got < 0 ? -1 : got;
    }
    double fraction() const override {
        const auto off = gzoffset(m_f);
        return m_size && off > 0 ? std::min(1.0, double(off) / double(m_size)) : 0.0;
    }

  private:
    gzFile m_f;
    std::uint64_t m_size;
};
#endif

#ifdef KVBE_HAVE_ZSTD
// A .zst file decompressed as it is read (ZSTD_decompressStream; concatenated frames too).
class ZstdFile final : public TraceSource {
  public:
    ZstdFile(std::FILE* f, std::uint64_t size)
        : m_f(f), m_size(size), m_ctx(ZSTD_createDStream()), m_in(ZSTD_DStreamInSize()) {}
    ~ZstdFile() override {
        ZSTD_freeDStream(m_ctx);
        std::fclose(m_f);
    }
    bool ok() const { return m_ctx != nullptr; }
    std::string error() const override { return m_error; }
    long read(char* buf, std::size_t n) override {
        ZSTD_outBuffer out{buf, n, 0};
        while (out.pos == 0) {
            if (m_inBuf.pos == m_inBuf.size) {
                const std::size_t got = std::fread(m_in.data(), 1, m_in.size(), m_f);
                if (got == 0) {
                    if (std::ferror(m_f)) return -1;
                    if (!m_frameDone) {
                        m_error = "the zstd stream ends inside a frame (is the file cut short?)";
                        return -1;
                    }
                    return 0;
                }
                m_read += got;
                m_inBuf = ZSTD_inBuffer{m_in.data(), got, 0};
            }
            const std::size_t r = ZSTD_decompressStream(m_ctx, &out, &m_inBuf);
            if (ZSTD_isError(r)) {
                m_error = std::string("not a valid zstd stream (") + ZSTD_getErrorName(r) + ")";
                return -1;
            }
            m_frameDone = r == 0;
        }
        return static_cast<long>(out.pos);
    }
    double fraction() const override {
        return m_size ? std::min(1.0, double(m_read) / double(m_size)) : 1.0;
    }

  private:
    std::FILE* m_f;
    std::uint64_t m_size, m_read = 0;
    ZSTD_DStream* m_ctx;
    std::vector<char> m_in;
    ZSTD_inBuffer m_inBuf{nullptr, 0, 0};
    bool m_frameDone = true;
    std::string m_error;
};
#endif

class MemorySource final : public TraceSource {
  public:
    explicit MemorySource(std::string_view t) : m_t(t) {}
    long read(char* buf, std::size_t n) override {
        const std::size_t k = std::min(n, m_t.size() - m_pos);
        std::memcpy(buf, m_t.data() + m_pos, k);
        m_pos += k;
        return static_cast<long>(k);
    }
    double fraction() const override {
        return m_t.empty() ? 1.0 : double(m_pos) / double(m_t.size());
    }
    std::optional<std::string_view> whole() const override { return m_t; }

  private:
    std::string_view m_t;
    std::size_t m_pos = 0;
};

} // namespace

Result<std::unique_ptr<TraceSource>> openTraceFile(const std::filesystem::path& path) {
    const std::string source = path.string();
    std::error_code ec;
    const auto size = std::filesystem::file_size(path, ec);
    if (ec) return Error{source + ": cannot read the trace (" + ec.message() + ")"};
    const auto ext = path.extension().string();
    if (ext == ".zst") {
#ifdef KVBE_HAVE_ZSTD
        std::FILE* f = std::fopen(source.c_str(), "rb");
        if (!f)
            return Error{source + ": cannot open the trace (" + std::string(std::strerror(errno)) +
                         ")"};
        auto z = std::make_unique<ZstdFile>(f, size);
        if (!z->ok()) return Error{source + ": cannot start the zstd decoder"};
        return std::unique_ptr<TraceSource>(std::move(z));
#else
        return Error{source +
                     ": zstd traces need libzstd, which this build does not have; decompress it "
                     "first (zstd -d) or use gzip"};
#endif
    }
    if (ext == ".gz") {
#ifdef KVBE_HAVE_ZLIB
        gzFile f = gzopen(source.c_str(), "rb");
        if (!f) return Error{source + ": cannot open the gzip file"};
        gzbuffer(f, 1u << 20);
        return std::unique_ptr<TraceSource>(std::make_unique<GzFile>(f, size));
#else
        return Error{source +
                     ": gzip traces need zlib, which this build does not have; gunzip it first"};
#endif
    }
    std::FILE* f = std::fopen(source.c_str(), "rb");
    if (!f)
        return Error{source + ": cannot open the trace (" + std::string(std::strerror(errno)) +
                     ")"};
    return std::unique_ptr<TraceSource>(std::make_unique<PlainFile>(f, size));
}

std::unique_ptr<TraceSource> memoryTraceSource(std::string_view text) {
    return std::make_unique<MemorySource>(text);
}

} // namespace kvbe::detail
