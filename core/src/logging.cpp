#include "relctl/logging.h"

#include <cstdlib>
#include <spdlog/sinks/stdout_sinks.h>
#include <spdlog/spdlog.h>

namespace relctl {

void configureLogging()
{
    auto logger = spdlog::stderr_logger_mt("relctl");
    logger->set_pattern("relctl: [%l] %v");
    const char* level = std::getenv("RELCTL_LOG");
    logger->set_level(level ? spdlog::level::from_str(level) : spdlog::level::warn);
    spdlog::set_default_logger(std::move(logger));
}

} // namespace relctl
