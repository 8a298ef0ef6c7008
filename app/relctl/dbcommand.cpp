#include "dbcommand.h"

#include "relctl/embedded.h"
#include "relctl/error.h"

namespace relctl::cli {

namespace {

std::string plainStatus(const json& s)
{
    auto yesNo = [](const json& v) { return v.get<bool>() ? std::string("yes") : std::string("no"); };
    std::string out = "path: " + s["path"].get<std::string>() + "\n" +
                      "initialized: " + yesNo(s["initialized"]) + "\n" + "running: " + yesNo(s["running"]) +
                      (s.contains("pid") ? " (pid " + std::to_string(s["pid"].get<long long>()) + ")" : "") +
                      "\n" + "conninfo: " + s["conninfo"].get<std::string>() + "\n" +
                      "socket directory: " + s["socket_directory"].get<std::string>() + "\n" +
                      "log: " + s["log"].get<std::string>() + "\n" +
                      "server user: " + s["server_user"].get<std::string>() + "\n";
    if (s.contains("version"))
        out += "version: " + s["version"].get<std::string>() + "\n";
    return out;
}

} // namespace

int dbCommand(const std::string& sub, bool demo, const Output& output)
{
    EmbeddedCluster cluster =
        demo ? EmbeddedCluster::demoForCurrentUser() : EmbeddedCluster::forCurrentUser();
    const std::string path = cluster.directory().string();
    if (sub == "path")
        return output.success(json{{"path", path}}, path + "\n");
    if (sub == "status") {
        const json s = cluster.status();
        return output.success(s, plainStatus(s));
    }
    if (sub == "start") {
        const std::string conninfo = cluster.ensureRunning();
        return output.success(cluster.status(), "running: " + conninfo + "\n");
    }
    const bool wasRunning = cluster.running();
    cluster.stop();
    return output.success(json{{"path", path}, {"stopped", wasRunning}},
                          wasRunning ? "stopped the server in " + path + "\n" : "not running\n");
}

} // namespace relctl::cli
