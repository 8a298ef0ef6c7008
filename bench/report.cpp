// relctl-bench-report: merges the benchmark programs' results into one
// table and one JSON file.
//
//   relctl-bench-report --json OUT RESULT.json...
//
// Each RESULT is a program's --json output ({"goals": [...]}, goals.h). A
// missing or unreadable file is reported as a goal not met, not skipped.

#include "goals.h"

#include <fstream>
#include <thread>

int main(int argc, char** argv)
{
    using namespace relctl::bench;
    std::string out;
    std::vector<std::string> inputs;
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        if (a == "--json" && i + 1 < argc)
            out = argv[++i];
        else
            inputs.push_back(a);
    }
    std::vector<Goal> goals;
    nlohmann::json sources = nlohmann::json::array();
    for (const std::string& path : inputs) {
        std::ifstream in(path);
        const nlohmann::json j = nlohmann::json::parse(in, nullptr, false);
        if (!j.is_object() || !j.contains("goals") || !j["goals"].is_array()) {
            Goal missing;
            missing.name = "results of " + path;
            missing.target = "present";
            goals.push_back(missing);
            continue;
        }
        sources.push_back(path);
        for (const auto& g : j["goals"])
            goals.push_back(Goal::fromJson(g));
    }
    std::printf("\n%-58s %11s %-8s %14s  %12s  %-14s %s\n", "goal", "value", "unit", "reference", "ratio",
                "target", "");
    int unmet = 0;
    for (const Goal& g : goals) {
        print(g);
        if (!g.met)
            ++unmet;
    }
    std::printf("\n%zu goals, %d not met, on %u cores\n", goals.size(), unmet,
                std::thread::hardware_concurrency());
    writeJson(out, goals,
              {{"cores", std::thread::hardware_concurrency()}, {"sources", sources}, {"unmet", unmet}});
    return unmet == 0 ? 0 : 3;
}
