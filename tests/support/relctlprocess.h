#pragma once

#include <QByteArray>
#include <QProcess>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

class TestDatabase;

inline QString qstr(const std::string& s)
{
    return QString::fromStdString(s);
}

// One finished relctl (or helper script) process.
struct RunResult
{
    int exitCode = -1;
    std::string out;
    std::string err;
    long long elapsedMs = 0;

    nlohmann::json json() const; // stdout parsed as one JSON object (a test failure otherwise)
    std::string line() const;    // stdout without the trailing newline
    // Exit code, time, stdout and stderr: what a failed assertion shows.
    std::string describe() const;
};

// describe() for QVERIFY2's message; valid until the thread's next call.
const char* failure(const RunResult& r);

using Args = std::vector<std::string>;
using Env = std::map<std::string, std::string>;

// Runs relctl as a separate OS process against the given database
// (RELCTL_DSN), waits for it and returns what it did.
RunResult runRelctl(const TestDatabase& db, const Args& args, const std::string& input = {},
                    const Env& env = {});
#ifndef RELCTL_TEST_NO_SHORT_NAME
inline RunResult relctl(const TestDatabase& db, const Args& args, const std::string& input = {},
                        const Env& env = {})
{
    return runRelctl(db, args, input, env);
}
#endif
RunResult relctlWithDsn(const std::string& dsn, const Args& args, const Env& env = {});

// Starts a helper script from tests/scripts without waiting, with RELCTL
// (the binary) and RELCTL_DSN in its environment; collect with finish().
// Starts relctl without waiting (e.g. a waiter in a queue); collect with finish().
std::unique_ptr<QProcess> startRelctl(const TestDatabase& db, const Args& args);
// The same against any connection string (a proxy, a cluster of the test's own).
std::unique_ptr<QProcess> startRelctlWithDsn(const std::string& dsn, const Args& args, const Env& env = {});

std::unique_ptr<QProcess> startScript(const TestDatabase& db, const std::string& script, const Args& args);
// The same against any connection string (a cluster of the test's own).
std::unique_ptr<QProcess> startScriptWithDsn(const std::string& dsn, const std::string& script,
                                             const Args& args, const Env& env = {});
RunResult finish(QProcess& process, int timeoutMs = 300000);

std::string relctlBinary();
