#pragma once

#include <memory>
#include <string>
#include <vector>

namespace relctl {

// A dedicated connection that LISTENs to the protocol's events (every
// recorded event notifies channel "relctl" with its environment). Kept apart
// from the query connection because notifications are not delivered while a
// transaction is open on the connection. Owned by one thread.
class EventListener final
{
public:
    // Connects and LISTENs. Throws Error(Unavailable) when the server cannot be reached.
    explicit EventListener(const std::string& conninfo);
    ~EventListener();
    EventListener(const EventListener&) = delete;
    EventListener& operator=(const EventListener&) = delete;

    // The connection's socket: readable when notifications may be waiting.
    // After a reconnect (a new EventListener) it is another socket.
    int socket() const;

    // Consumes what arrived without blocking and returns the environments the
    // events were about (deduplicated, in arrival order). Throws
    // Error(Unavailable) when the connection is gone: nothing is kept for a
    // disconnected listener, so the caller re-reads everything after
    // reconnecting.
    std::vector<std::string> take();

private:
    struct Impl;
    std::unique_ptr<Impl> d;
};

} // namespace relctl
