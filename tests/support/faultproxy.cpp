#include "faultproxy.h"

#include <QtGlobal>
#include <arpa/inet.h>
#include <cstdint>
#include <cstdio>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>
#include <vector>

namespace {

// The value of keyword `key` in a keyword/value DSN without quoting (as the
// test cluster's DSN is).
std::string dsnValue(const std::string& dsn, const std::string& key)
{
    const auto at = dsn.find(key + "=");
    if (at == std::string::npos)
        return {};
    const auto start = at + key.size() + 1;
    return dsn.substr(start, dsn.find(' ', start) - start);
}

// A protocol message: its type, its length (itself included), its body.
std::string message(char type, const std::string& body)
{
    const auto len = static_cast<std::uint32_t>(body.size() + 4);
    std::string out(1, type);
    for (int shift = 24; shift >= 0; shift -= 8)
        out += static_cast<char>((len >> shift) & 0xff);
    return out + body;
}

// ErrorResponse with a severity and a message only (no SQLSTATE field), and
// ReadyForQuery outside a transaction: the whole answer to a simple query or
// to an extended query's messages up to its Sync.
std::string serverGoneReply()
{
    using namespace std::string_literals;
    return message('E', "SERROR\0"s + "Mserver closed the connection unexpectedly\0"s + "\0"s) +
           message('Z', "I");
}

} // namespace

FaultProxy::FaultProxy(const std::string& clusterDsn)
    : m_socketPath(dsnValue(clusterDsn, "host") + "/.s.PGSQL." +
                   (dsnValue(clusterDsn, "port").empty() ? "5432" : dsnValue(clusterDsn, "port"))),
      m_user(dsnValue(clusterDsn, "user"))
{
    m_listen = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof addr;
    if (bind(m_listen, reinterpret_cast<sockaddr*>(&addr), len) != 0 || listen(m_listen, 64) != 0 ||
        getsockname(m_listen, reinterpret_cast<sockaddr*>(&addr), &len) != 0)
        qFatal("proxy: cannot listen");
    m_port = ntohs(addr.sin_port);
    if (pipe2(m_wake, O_CLOEXEC | O_NONBLOCK) != 0)
        qFatal("proxy: pipe");
    m_thread = std::thread([this] { loop(); });
}

FaultProxy::~FaultProxy()
{
    m_stopping = true;
    [[maybe_unused]] auto n = write(m_wake[1], "x", 1);
    m_thread.join();
    for (auto& [fd, pair] : m_pairs)
        close(fd);
    close(m_listen);
    close(m_wake[0]);
    close(m_wake[1]);
}

std::string FaultProxy::dsn(const std::string& dbname) const
{
    return "host=127.0.0.1 port=" + std::to_string(m_port) + " user=" + m_user + " dbname=" + dbname +
           " sslmode=disable gssencmode=disable";
}

void FaultProxy::arm(const std::string& pattern, Fault fault, bool thenRefuse)
{
    std::lock_guard lock(m_faultMutex);
    m_pattern = pattern;
    m_fault = fault;
    m_refuseAfterFault = thenRefuse;
}

void FaultProxy::accept()
{
    const int client = accept4(m_listen, nullptr, nullptr, SOCK_CLOEXEC);
    if (client < 0)
        return;
    ++m_connections;
    if (m_refusing) {
        close(client);
        return;
    }
    const int server = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    std::snprintf(addr.sun_path, sizeof addr.sun_path, "%s", m_socketPath.c_str());
    if (connect(server, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
        close(client);
        close(server);
        return;
    }
    auto stream = std::make_shared<Stream>();
    m_pairs[client] = Pair{server, false, stream, {}, {}};
    m_pairs[server] = Pair{client, true, stream, {}, {}};
}

void FaultProxy::closePair(int fd)
{
    const int peer = m_pairs[fd].peer;
    close(fd);
    close(peer);
    m_pairs.erase(fd);
    m_pairs.erase(peer);
}

// The server's messages are followed while that matters: up to the
// ReadyForQuery ('Z') that ends the setup, and while a reply is being lost.
void FaultProxy::fromServer(int fd, Pair& p, const char* data, std::size_t n)
{
    Stream& s = *p.stream;
    const bool wasReady = s.ready;
    if (m_stalled && wasReady)
        return;
    if (!wasReady || s.losingReply) {
        p.pending.append(data, n);
        std::size_t at = 0;
        bool replyOver = false;
        while (p.pending.size() - at >= 5) {
            const auto* b = reinterpret_cast<const unsigned char*>(p.pending.data() + at);
            const std::size_t len = (std::size_t(b[1]) << 24) | (b[2] << 16) | (b[3] << 8) | b[4];
            if (p.pending.size() - at < 1 + len)
                break;
            if (b[0] == 'Z' && !s.ready)
                s.ready = true;
            else if (b[0] == 'Z' && s.losingReply)
                replyOver = true;
            at += 1 + len;
        }
        p.pending.erase(0, at);
        if (s.losingReply) {
            if (replyOver)
                closePair(fd);
            return; // dropped
        }
        if (!wasReady) { // the startup is never delayed
            [[maybe_unused]] auto w = write(p.peer, data, n);
            return;
        }
    }
    forward(p, data, n);
}

void FaultProxy::fromClient(int fd, Pair& p, const char* data, std::size_t n)
{
    Stream& s = *p.stream;
    if (s.ready && s.firstStatement) {
        s.firstStatement = false;
        // relctl's bounds statement: a first simple query of SETs. It and
        // its reply, to the next ReadyForQuery, are part of the setup.
        if (n > 5 && data[0] == 'Q' && std::string_view(data + 5, n - 5).rfind("SET ", 0) == 0) {
            s.ready = false;
            [[maybe_unused]] auto w = write(p.peer, data, n);
            return;
        }
    }
    if (s.ready) {
        if (m_stalled)
            return;
        Fault fault = Fault::None;
        {
            std::lock_guard lock(m_faultMutex);
            if (m_fault != Fault::None &&
                std::string_view(data, n).find(m_pattern) != std::string_view::npos) {
                fault = m_fault;
                m_fault = Fault::None;
                if (m_refuseAfterFault)
                    m_refusing = true;
            }
        }
        if (fault == Fault::LoseRequest) {
            ++m_struck;
            closePair(fd);
            return;
        }
        if (fault == Fault::AnswerServerGone) {
            ++m_struck;
            const std::string reply = serverGoneReply();
            [[maybe_unused]] auto w = write(fd, reply.data(), reply.size());
            return;
        }
        if (fault == Fault::LoseReply) {
            ++m_struck;
            s.losingReply = true;
        }
        forward(p, data, n);
        return;
    }
    [[maybe_unused]] auto w = write(p.peer, data, n);
}

void FaultProxy::forward(Pair& p, const char* data, std::size_t n)
{
    const int delayMs = m_delayMs;
    if (delayMs <= 0 && p.held.empty()) {
        [[maybe_unused]] auto w = write(p.peer, data, n);
        return;
    }
    p.held.emplace_back(std::chrono::steady_clock::now() + std::chrono::milliseconds(delayMs),
                        std::string(data, n));
}

void FaultProxy::flushHeld()
{
    const auto now = std::chrono::steady_clock::now();
    for (auto& [fd, pair] : m_pairs)
        while (!pair.held.empty() && pair.held.front().first <= now) {
            const std::string& bytes = pair.held.front().second;
            [[maybe_unused]] auto w = write(pair.peer, bytes.data(), bytes.size());
            pair.held.pop_front();
        }
}

void FaultProxy::loop()
{
    while (!m_stopping) {
        std::vector<pollfd> fds{{m_wake[0], POLLIN, 0}, {m_listen, POLLIN, 0}};
        for (auto& [fd, pair] : m_pairs)
            fds.push_back({fd, POLLIN, 0});
        poll(fds.data(), fds.size(), m_delayMs > 0 ? 5 : 100);
        if (m_dropAll.exchange(false)) {
            while (!m_pairs.empty())
                closePair(m_pairs.begin()->first);
            continue;
        }
        flushHeld();
        if (fds[1].revents & POLLIN)
            accept();
        for (std::size_t i = 2; i < fds.size(); ++i) {
            if (!(fds[i].revents & (POLLIN | POLLHUP | POLLERR)) || !m_pairs.count(fds[i].fd))
                continue;
            Pair& p = m_pairs[fds[i].fd];
            char buffer[65536];
            const ssize_t n = read(fds[i].fd, buffer, sizeof buffer);
            if (n <= 0) {
                closePair(fds[i].fd);
                continue;
            }
            if (p.fromServer)
                fromServer(fds[i].fd, p, buffer, static_cast<std::size_t>(n));
            else
                fromClient(fds[i].fd, p, buffer, static_cast<std::size_t>(n));
        }
    }
}
