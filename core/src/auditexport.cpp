// Export of the filtered, sorted audit trail: one COPY of
// relctl.console_audit_export (the same filter and order as the browser's
// pages, over one snapshot), each row written as it arrives, straight from the
// server's text (auditformat.cpp formats it), the file written on a thread of
// its own.

#include "relctl/auditexport.h"

#include "auditformat.h"
#include "relctl/error.h"

#include <algorithm>
#include <cerrno>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <mutex>
#include <optional>
#include <ostream>
#include <sys/stat.h>
#include <thread>
#include <unistd.h>
#include <utility>

namespace relctl {

namespace {

[[noreturn]] void streamFailed(const std::string& what)
{
    throw Error(ExitCode::Internal, "could not write the export: " + what);
}

// Writes an export's chunks to its stream on a thread of its own, one chunk
// behind the formatting, so that the file system's share of an export (the
// copy into the page cache, the blocks' allocation) overlaps with reading and
// formatting the next rows instead of adding to them. One chunk in flight:
// memory stays at two chunks.
class ChunkWriter
{
public:
    explicit ChunkWriter(std::ostream& out) : m_out(out), m_thread([this] { loop(); }) {}

    ~ChunkWriter()
    {
        {
            std::lock_guard lock(m_mutex);
            m_stopping = true;
        }
        m_changed.notify_all();
        m_thread.join();
    }

    ChunkWriter(const ChunkWriter&) = delete;
    ChunkWriter& operator=(const ChunkWriter&) = delete;

    // Hands `chunk` over and gives back an empty buffer (the previous chunk's,
    // its capacity kept), once the previous chunk is written. Throws what a
    // write failed with.
    void put(std::string& chunk)
    {
        std::unique_lock lock(m_mutex);
        m_changed.wait(lock, [&] { return !m_full; });
        if (m_error)
            streamFailed(*m_error);
        std::swap(m_chunk, chunk);
        chunk.clear();
        m_full = true;
        m_changed.notify_all();
    }

    // Waits until every chunk handed over is written; throws what a write failed with.
    void finish()
    {
        std::unique_lock lock(m_mutex);
        m_changed.wait(lock, [&] { return !m_full; });
        if (m_error)
            streamFailed(*m_error);
    }

private:
    void loop()
    {
        std::unique_lock lock(m_mutex);
        for (;;) {
            m_changed.wait(lock, [&] { return m_full || m_stopping; });
            if (!m_full)
                return;
            // put() waits while m_full, so the chunk is this thread's until then.
            lock.unlock();
            std::optional<std::string> error;
            if (!m_error) {
                m_out.write(m_chunk.data(), std::streamsize(m_chunk.size()));
                if (!m_out)
                    error = std::strerror(errno);
            }
            lock.lock();
            if (error && !m_error)
                m_error = std::move(error);
            m_full = false;
            m_changed.notify_all();
        }
    }

    std::ostream& m_out;
    std::mutex m_mutex;
    std::condition_variable m_changed;
    std::string m_chunk; // the chunk being written, while m_full
    bool m_full = false;
    bool m_stopping = false;
    std::optional<std::string> m_error;
    std::thread m_thread; // last: it starts once the members above exist
};

} // namespace

std::int64_t writeAuditExport(ConsoleQueries& queries, const AuditExportOptions& options, std::ostream& out)
{
    // Bytes gathered before a write to the stream: 1 MiB, so that a million
    // events' JSON (450 MB) is about 450 write calls rather than 7,000, on
    // machines where each system call is dear (a paravirtualised VM). Writing
    // the file is what separates an export from COPY (relctl-audit-bench
    // prints the same export into /dev/null beside it): ChunkWriter writes
    // each chunk while the next is formatted.
    constexpr std::size_t kChunk = std::size_t(1) << 20;
    const bool csv = options.format == AuditExportFormat::Csv;
    const std::int64_t pageSize = std::max(1, options.pageSize);
    std::string buffer;
    buffer.reserve(2 * kChunk);
    if (csv)
        detail::appendCsvHeader(buffer);
    else
        buffer += '[';
    ChunkWriter writerThread(out);
    const auto flush = [&] {
        writerThread.put(buffer);
        if (buffer.capacity() < 2 * kChunk)
            buffer.reserve(2 * kChunk);
    };
    const auto cancelled = [&] { return options.cancel && options.cancel->load(); };
    if (cancelled())
        throw AuditExportCancelled();
    detail::RowWriter writer(csv, true);
    std::int64_t rows = 0;
    queries.auditRows(options.filter, options.sort, [&](const AuditRowText& row) {
        // A cancel is honoured where a page of rows begins, as when the
        // export read pages: never after the last row.
        if (rows > 0 && rows % pageSize == 0 && cancelled())
            throw AuditExportCancelled();
        if (!csv)
            buffer += rows == 0 ? "\n" : ",\n";
        writer.row(row, buffer);
        ++rows;
        if (buffer.size() >= kChunk || rows % pageSize == 0)
            flush();
        if (rows % pageSize == 0 && options.progress)
            options.progress(rows);
    });
    flush();
    writerThread.finish();
    if ((rows == 0 || rows % pageSize != 0) && options.progress)
        options.progress(rows);
    if (!csv)
        out << "\n]\n";
    out.flush();
    if (!out)
        streamFailed(std::strerror(errno));
    return rows;
}

std::int64_t exportAuditFile(ConsoleQueries& queries, const AuditExportOptions& options,
                             const std::string& path)
{
    // In the target's directory, so the final rename is atomic (one file system).
    std::string temporary = path + ".part-XXXXXX";
    const int fd = mkstemp(temporary.data());
    if (fd < 0)
        throw Error(ExitCode::Internal,
                    "could not create a file next to " + path + ": " + std::strerror(errno));
    // mkstemp's 0600 would make the export unreadable to the reviewer's group.
    fchmod(fd, 0644);
    ::close(fd);
    struct Cleanup
    {
        const std::string& file;
        bool keep = false;
        ~Cleanup()
        {
            if (!keep)
                std::remove(file.c_str());
        }
    } cleanup{temporary};

    std::int64_t rows = 0;
    {
        std::ofstream out(temporary, std::ios::binary | std::ios::trunc);
        if (!out)
            throw Error(ExitCode::Internal, "could not open " + temporary + ": " + std::strerror(errno));
        rows = writeAuditExport(queries, options, out);
        out.close();
        if (!out)
            streamFailed(temporary);
    }
    if (std::rename(temporary.c_str(), path.c_str()) != 0)
        throw Error(ExitCode::Internal,
                    "could not rename the export to " + path + ": " + std::strerror(errno));
    cleanup.keep = true;
    return rows;
}

} // namespace relctl
