// Fd, the descriptor closed on destruction (relctl/fd.h): in the client
// library, apart from spawn() in process.cpp, because the client's own files
// hold descriptors (the request secrets' directory: state.cpp,
// privatefiles.cpp) and the client carries no code that starts a process.
#include "relctl/fd.h"

#include <unistd.h>
#include <utility>

namespace relctl {

Fd::~Fd()
{
    if (m_fd >= 0)
        close(m_fd);
}

Fd::Fd(Fd&& other) noexcept : m_fd(std::exchange(other.m_fd, -1)) {}

Fd& Fd::operator=(Fd&& other) noexcept
{
    if (this != &other) {
        if (m_fd >= 0)
            close(m_fd);
        m_fd = std::exchange(other.m_fd, -1);
    }
    return *this;
}

} // namespace relctl
