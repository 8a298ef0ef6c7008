// `relctl lease acquire` as the tests run it (relctlargs.h).

#define RELCTL_TEST_NO_SHORT_NAME
#include "relctlargs.h"

#include <QtGlobal>

Args leaseAcquireArgs(const std::string& env, const std::string& job, int generation)
{
    return {"--json",
            "lease",
            "acquire",
            "--env",
            env,
            "--job",
            job,
            "--release",
            "r" + std::to_string(generation),
            "--generation",
            std::to_string(generation)};
}

AcquiredLease acquireLease(const std::string& dsn, const Args& args, const Env& env)
{
    RunResult r = relctlWithDsn(dsn, args, env);
    if (r.exitCode != 0)
        qFatal("acquire failed (%d): %s", r.exitCode, r.err.c_str());
    const nlohmann::json j = r.json();
    return {j["handle"].get<std::string>(), std::to_string(j["token"].get<long long>()),
            j["lease_id"].get<std::string>()};
}
