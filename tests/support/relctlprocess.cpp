#define RELCTL_TEST_NO_SHORT_NAME
#include "relctlprocess.h"

#include "testdatabase.h"

#include <QElapsedTimer>
#include <QProcessEnvironment>
#include <QtTest>

namespace {

QProcessEnvironment environmentFor(const std::string& dsn, const Env& extra)
{
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    for (const char* name : {"RELCTL_LEASE", "PGHOST", "PGDATABASE", "PGSERVICE", "PGUSER", "PGPORT"})
        env.remove(QLatin1String(name));
    env.insert(QStringLiteral("RELCTL_DSN"), qstr(dsn));
    env.insert(QStringLiteral("RELCTL"), qstr(relctlBinary()));
    for (const auto& [key, value] : extra)
        env.insert(qstr(key), qstr(value));
    return env;
}

RunResult run(const std::string& program, const Args& args, const QProcessEnvironment& env,
              const std::string& input)
{
    QProcess p;
    QStringList list;
    for (const std::string& a : args)
        list << qstr(a);
    p.setProcessEnvironment(env);
    QElapsedTimer timer;
    timer.start();
    p.start(qstr(program), list);
    if (!p.waitForStarted())
        qFatal("cannot start %s", program.c_str());
    if (!input.empty())
        p.write(input.data(), static_cast<qint64>(input.size()));
    p.closeWriteChannel();
    RunResult r = finish(p);
    r.elapsedMs = timer.elapsed();
    return r;
}

} // namespace

std::string relctlBinary()
{
    return RELCTL_BIN;
}

nlohmann::json RunResult::json() const
{
    auto j = nlohmann::json::parse(out, nullptr, false);
    if (j.is_discarded() || !j.is_object())
        qFatal("relctl output is not one JSON object: %s / %s", out.c_str(), err.c_str());
    return j;
}

std::string RunResult::line() const
{
    std::string s = out;
    while (!s.empty() && (s.back() == '\n' || s.back() == '\r'))
        s.pop_back();
    return s;
}

std::string RunResult::describe() const
{
    return "exit " + std::to_string(exitCode) + " after " + std::to_string(elapsedMs) + " ms\nstdout: [" +
           out + "]\nstderr: [" + err + "]";
}

const char* failure(const RunResult& r)
{
    static thread_local std::string text;
    text = r.describe();
    return text.c_str();
}

RunResult runRelctl(const TestDatabase& db, const Args& args, const std::string& input, const Env& env)
{
    return run(relctlBinary(), args, environmentFor(db.dsn(), env), input);
}

RunResult relctlWithDsn(const std::string& dsn, const Args& args, const Env& env)
{
    return run(relctlBinary(), args, environmentFor(dsn, env), {});
}

std::unique_ptr<QProcess> startRelctl(const TestDatabase& db, const Args& args)
{
    return startRelctlWithDsn(db.dsn(), args);
}

std::unique_ptr<QProcess> startRelctlWithDsn(const std::string& dsn, const Args& args, const Env& env)
{
    auto p = std::make_unique<QProcess>();
    QStringList list;
    for (const std::string& a : args)
        list << qstr(a);
    p->setProcessEnvironment(environmentFor(dsn, env));
    p->start(qstr(relctlBinary()), list);
    if (!p->waitForStarted())
        qFatal("cannot start relctl");
    p->closeWriteChannel();
    return p;
}

std::unique_ptr<QProcess> startScript(const TestDatabase& db, const std::string& script, const Args& args)
{
    return startScriptWithDsn(db.dsn(), script, args);
}

std::unique_ptr<QProcess> startScriptWithDsn(const std::string& dsn, const std::string& script,
                                             const Args& args, const Env& env)
{
    auto p = std::make_unique<QProcess>();
    QStringList list{qstr(std::string(RELCTL_TEST_SCRIPTS) + "/" + script)};
    for (const std::string& a : args)
        list << qstr(a);
    p->setProcessEnvironment(environmentFor(dsn, env));
    p->start(QStringLiteral("bash"), list);
    if (!p->waitForStarted())
        qFatal("cannot start %s", script.c_str());
    p->closeWriteChannel();
    return p;
}

RunResult finish(QProcess& p, int timeoutMs)
{
    RunResult r;
    // waitForFinished() is false for a process that has already finished.
    if (p.state() != QProcess::NotRunning && !p.waitForFinished(timeoutMs)) {
        p.kill();
        p.waitForFinished();
        qFatal("process did not finish within %d ms: %s", timeoutMs,
               p.readAllStandardError().toStdString().c_str());
    }
    r.exitCode = p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -1;
    r.out = p.readAllStandardOutput().toStdString();
    r.err = p.readAllStandardError().toStdString();
    return r;
}
