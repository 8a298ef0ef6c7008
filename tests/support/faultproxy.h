#pragma once

// A TCP proxy on 127.0.0.1 to the test cluster's unix socket, on a thread of
// its own (relctl runs as a separate process while the test thread waits for
// it), that injects the network faults a client must survive: a server that
// goes silent, a request lost on its way, a reply lost after the server
// committed, and a server that refuses new connections. Faults apply only
// after a connection's setup: its startup (to the server's first
// ReadyForQuery) and, when it is the first statement, relctl's bounds
// statement (session::boundsStatement, to the next one). Every client can
// then always connect unless connections are refused, and a fault strikes a
// session that is already working, as the tests mean it to.

#include <atomic>
#include <chrono>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

class FaultProxy
{
public:
    explicit FaultProxy(const std::string& clusterDsn);
    ~FaultProxy();
    FaultProxy(const FaultProxy&) = delete;
    FaultProxy& operator=(const FaultProxy&) = delete;

    // A DSN for `dbname` through the proxy (sslmode and gssencmode off: the
    // startup is then plain protocol messages the proxy can follow).
    std::string dsn(const std::string& dbname) const;

    // Every started connection drops every further byte in both directions
    // without a word: the server looks alive to the kernel, silent to libpq.
    void stall() { m_stalled = true; }

    // The next request whose bytes contain `pattern` (e.g. "relctl.publish(")
    // reaches the server, which runs and commits it; everything the server
    // answers is dropped, and once its ReadyForQuery has passed (the statement
    // and its commit are over) both ends are closed. The client is left with
    // a lost reply to a committed write.
    // thenRefuse: from that moment on, new connections are refused as well.
    void loseReplyTo(const std::string& pattern, bool thenRefuse = false)
    {
        arm(pattern, Fault::LoseReply, thenRefuse);
    }
    // The next request containing `pattern` never reaches the server: both
    // ends are closed instead. The client cannot tell this from a lost reply.
    void loseRequest(const std::string& pattern) { arm(pattern, Fault::LoseRequest, false); }
    // The next request containing `pattern` never reaches the server: the
    // proxy answers it with an error in libpq's words for a server that went
    // away ("server closed the connection unexpectedly") and no SQLSTATE,
    // then ReadyForQuery, and the connection stays open. The loss reaches
    // libpqxx as a failed statement rather than a broken connection (the
    // form in which relctl once reported a server crash as an internal error).
    void answerServerGone(const std::string& pattern) { arm(pattern, Fault::AnswerServerGone, false); }
    // New connections are accepted and closed at once (a server down or
    // restarting); connections already made are left alone.
    void refuseConnections(bool refuse) { m_refusing = refuse; }
    // Every byte of a started connection is held back this long, in order, in
    // both directions (a slow or congested network); zero: none.
    void delay(std::chrono::milliseconds by) { m_delayMs = static_cast<int>(by.count()); }
    // Closes every connection open now, both ends (a network blip, a proxy or
    // a load balancer restarting); new connections go through.
    void dropAll() { m_dropAll = true; }

    // How many armed faults have struck.
    int struck() const { return m_struck; }
    // How many connections were accepted (refused ones included).
    int connections() const { return m_connections; }

private:
    enum class Fault { None, LoseReply, LoseRequest, AnswerServerGone };
    struct Stream
    {
        bool ready = false;         // the setup's last ReadyForQuery went through
        bool firstStatement = true; // the client has sent nothing since the startup
        bool losingReply = false;   // the server's bytes are dropped until its next ReadyForQuery
    };
    struct Pair
    {
        int peer = -1;
        bool fromServer = false;
        std::shared_ptr<Stream> stream; // shared by both directions
        std::string pending;            // server bytes not yet parsed into messages
        // Bytes held back for the peer (delay), with when they are due.
        std::deque<std::pair<std::chrono::steady_clock::time_point, std::string>> held;
    };

    void arm(const std::string& pattern, Fault fault, bool thenRefuse);
    void accept();
    void closePair(int fd);
    void fromServer(int fd, Pair& p, const char* data, std::size_t n);
    void fromClient(int fd, Pair& p, const char* data, std::size_t n);
    void loop();
    void forward(Pair& p, const char* data, std::size_t n);
    void flushHeld();

    std::string m_socketPath;
    std::string m_user;
    int m_listen = -1;
    int m_wake[2]{-1, -1};
    std::uint16_t m_port = 0;
    std::atomic<bool> m_stalled{false};
    std::atomic<bool> m_refusing{false};
    std::atomic<bool> m_stopping{false};
    std::atomic<bool> m_dropAll{false};
    std::atomic<int> m_delayMs{0};
    std::atomic<int> m_struck{0};
    std::atomic<int> m_connections{0};
    std::mutex m_faultMutex;
    std::string m_pattern;
    Fault m_fault = Fault::None;
    bool m_refuseAfterFault = false;
    std::map<int, Pair> m_pairs; // by descriptor, both ends; only the proxy's thread touches it
    std::thread m_thread;
};
