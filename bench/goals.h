#pragma once

// What every benchmark program reports: goals, each a measured value against
// its target, most of them as a ratio to a reference measured in the same
// run. Printed as a table line and written, with --json FILE, as
// {"goals": [{"name", "value", "unit", "reference", "ratio", "target", "met"}]}
// for relctl-bench-report (bench/report.cpp) to merge.

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace relctl::bench {

struct Goal
{
    std::string name;
    double value = 0;
    std::string unit;
    std::optional<double> reference; // the same run's reference, in the same unit
    std::string target;              // "ratio >= 0.8", "< 20 ms", ...
    bool met = false;

    std::optional<double> ratio() const
    {
        if (!reference || *reference == 0)
            return std::nullopt;
        return value / *reference;
    }

    nlohmann::json toJson() const
    {
        nlohmann::json j{{"name", name}, {"value", value}, {"unit", unit}, {"target", target}, {"met", met}};
        j["reference"] = reference ? nlohmann::json(*reference) : nlohmann::json();
        j["ratio"] = ratio() ? nlohmann::json(*ratio()) : nlohmann::json();
        return j;
    }

    static Goal fromJson(const nlohmann::json& j)
    {
        Goal g;
        g.name = j.value("name", std::string());
        g.value = j.value("value", 0.0);
        g.unit = j.value("unit", std::string());
        if (j.contains("reference") && j["reference"].is_number())
            g.reference = j["reference"].get<double>();
        g.target = j.value("target", std::string());
        g.met = j.value("met", false);
        return g;
    }
};

// A goal on a ratio: value / reference compared with `least` (at least) or
// `most` (at most).
inline Goal ratioAtLeast(std::string name, double value, double reference, std::string unit, double least)
{
    Goal g{std::move(name),
           value,
           std::move(unit),
           reference,
           "ratio >= " + std::to_string(least).substr(0, 4),
           false};
    g.met = reference > 0 && value / reference >= least;
    return g;
}

inline Goal ratioAtMost(std::string name, double value, double reference, std::string unit, double most)
{
    Goal g{std::move(name),
           value,
           std::move(unit),
           reference,
           "ratio <= " + std::to_string(most).substr(0, 4),
           false};
    g.met = reference > 0 && value / reference <= most;
    return g;
}

inline Goal below(std::string name, double value, std::string unit, double limit)
{
    char target[64];
    std::snprintf(target, sizeof target, "< %g %s", limit, unit.c_str());
    Goal g{std::move(name), value, std::move(unit), std::nullopt, target, false};
    g.met = value < limit;
    return g;
}

inline void print(const Goal& g)
{
    char reference[64] = "";
    if (g.reference)
        std::snprintf(reference, sizeof reference, "%.4g", *g.reference);
    char ratio[32] = "";
    if (g.ratio())
        std::snprintf(ratio, sizeof ratio, "%.2f", *g.ratio());
    std::printf("%-58s %11.4g %-8s ref %10s  ratio %6s  %-14s %s\n", g.name.c_str(), g.value, g.unit.c_str(),
                reference, ratio, g.target.c_str(), g.met ? "met" : "NOT MET");
    std::fflush(stdout);
}

inline void writeJson(const std::string& path, const std::vector<Goal>& goals, nlohmann::json extra = {})
{
    if (path.empty())
        return;
    nlohmann::json all = nlohmann::json::array();
    for (const Goal& g : goals)
        all.push_back(g.toJson());
    nlohmann::json out = extra.is_object() ? std::move(extra) : nlohmann::json::object();
    out["goals"] = std::move(all);
    std::ofstream file(path);
    file << out.dump(2) << '\n';
    if (!file) {
        std::fprintf(stderr, "could not write %s\n", path.c_str());
        std::exit(1);
    }
}

} // namespace relctl::bench
