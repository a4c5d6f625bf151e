// kvbe-serving-standin as a child process of a test: started with its flags, its URL read from
// the line it prints, killed when the test is done. It exits by itself after `lifetime` seconds
// (a server that stops mid-run, or a safety net for a test that hangs).
#pragma once

#include <QProcess>
#include <QString>
#include <QStringList>

class Standin {
  public:
    explicit Standin(const QStringList& args, double lifetimeS = 150) {
        m_p.start(QStringLiteral(KVBE_STANDIN_PATH),
                  args + QStringList{"--lifetime", QString::number(lifetimeS)});
        if (!m_p.waitForStarted(10000)) return;
        for (int i = 0; i < 100 && !m_p.canReadLine(); ++i)
            m_p.waitForReadyRead(100);
        const QString line = QString::fromUtf8(m_p.readLine()).trimmed();
        const auto at = line.indexOf("http://127.0.0.1:");
        if (at >= 0) m_url = line.mid(at);
    }
    ~Standin() {
        m_p.kill();
        m_p.waitForFinished(5000);
    }
    Standin(const Standin&) = delete;
    Standin& operator=(const Standin&) = delete;
    QString url() const { return m_url; }
    QByteArray log() {
        m_p.waitForReadyRead(50);
        m_log += m_p.readAllStandardError();
        return m_log;
    }

  private:
    QProcess m_p;
    QString m_url;
    QByteArray m_log;
};
