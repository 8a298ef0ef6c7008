#pragma once

// An owned file descriptor. Apart from relctl/process.h (spawn(), in
// relctl_cluster) because the client library holds descriptors too (the
// request secrets' directory) and must not carry code that starts a process.

namespace relctl {

// A file descriptor closed on destruction.
class Fd final
{
public:
    explicit Fd(int fd = -1) noexcept : m_fd(fd) {}
    ~Fd();
    Fd(Fd&& other) noexcept;
    Fd& operator=(Fd&& other) noexcept;
    Fd(const Fd&) = delete;
    Fd& operator=(const Fd&) = delete;

    int get() const noexcept { return m_fd; }

private:
    int m_fd;
};

} // namespace relctl
