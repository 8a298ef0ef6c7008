#include "relctl/embedded.h"

#include "relctl/error.h"

namespace relctl {

EmbeddedCluster::EmbeddedCluster(std::filesystem::path directory)
    : m_directory(std::move(directory))
{
}

EmbeddedCluster EmbeddedCluster::forCurrentUser()
{
    return EmbeddedCluster(std::filesystem::path());
}

std::string EmbeddedCluster::conninfo() const
{
    return {};
}

std::string EmbeddedCluster::ensureRunning()
{
    throw Error(ExitCode::Unavailable, "the embedded database is not available in this build yet");
}

bool EmbeddedCluster::running() const
{
    return false;
}

nlohmann::json EmbeddedCluster::status() const
{
    return nlohmann::json::object();
}

void EmbeddedCluster::stop() {}

bool embeddedIsDefault()
{
    // Until the embedded cluster exists, libpq's defaults apply.
    return false;
}

} // namespace relctl
