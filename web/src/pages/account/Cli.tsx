import { useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import {
  cliDevicesQuery,
  cliInstallQuery,
  cliStatusQuery,
  recordCliDownload,
  useRevokeDevice,
} from '../../features/account/api';
import { useI18n } from '../../i18n';
import { ErrorLine, Loading, Select } from '../../ui';

type Platform = 'linux' | 'macos' | 'windows';

/**
 * The CLI tab (`/account?tab=cli`): whether the user uses the CLI (a login or check-in in the last 30 days), the
 * devices that checked in (newest first, at most 20; removing one revokes its credential, so the CLI there is
 * logged out), and how to install and sign in (`arc login`). Showing the steps records nothing; the download link
 * counts a download (`cli_download`).
 */
export default function Cli() {
  const { t, date } = useI18n();
  const status = useQuery(cliStatusQuery());
  const devices = useQuery(cliDevicesQuery());
  // Revoking a device's credential logs the CLI there out at its next call.
  const revoke = useRevokeDevice();
  const [platform, setPlatform] = useState<Platform>('linux');
  const [shown, setShown] = useState<Platform | null>(null);
  const install = useQuery(cliInstallQuery(shown));
  return (
    <div>
      <h2>{t('Command-line client')}</h2>
      {status.data ? (
        <p role="status">
          {status.data.installed
            ? t('You use the CLI: last seen {when}.', { when: date(status.data.last_cli_at) })
            : t('You have not used the CLI in the last 30 days.')}
        </p>
      ) : (
        !status.error && <Loading />
      )}
      <ErrorLine error={status.error} />
      <p>
        {t('Install arc, then run {cmd} in a terminal: it opens a page here where you confirm the code it shows.', {
          cmd: 'arc login',
        })}
      </p>
      <form
        className="inline"
        onSubmit={(e) => {
          e.preventDefault();
          setShown(platform);
        }}
      >
        <Select
          label={t('Your system')}
          value={platform}
          onChange={(v) => setPlatform(v as Platform)}
          options={[
            { value: 'linux', label: 'Linux' },
            { value: 'macos', label: 'macOS' },
            { value: 'windows', label: 'Windows' },
          ]}
        />
        <button type="submit">{t('Show the install steps')}</button>
      </form>
      {install.data && (
        <div>
          <p className="muted">
            {t('arc {version}; needs {requires}.', { version: install.data.version, requires: install.data.requires })}
          </p>
          <pre className="cli-steps">{install.data.install.join('\n')}</pre>
          <p>
            {/* Showing the steps records nothing; this link counts a download as the browser fetches the package. */}
            <a href={install.data.url} download onClick={() => shown && void recordCliDownload(shown)}>
              {t('Download arc {version}', { version: install.data.version })}
            </a>
          </p>
        </div>
      )}
      <ErrorLine error={install.error} />

      <h2>{t('Devices')}</h2>
      {devices.data ? (
        devices.data.devices.length === 0 ? (
          <p className="muted">{t('No device has checked in yet.')}</p>
        ) : (
          <div className="table-wrap">
            <table className="table">
              <thead>
                <tr>
                  <th>{t('Device')}</th>
                  <th>{t('System')}</th>
                  <th>{t('Version')}</th>
                  <th>{t('Last project')}</th>
                  <th>{t('Last seen')}</th>
                  <th />
                </tr>
              </thead>
              <tbody>
                {devices.data.devices.map((d) => (
                  <tr key={d.device_id}>
                    <td>{d.hostname || d.device_id}</td>
                    <td>{d.platform}</td>
                    <td>{d.arc_version}</td>
                    <td>{d.last_project ?? '—'}</td>
                    <td>{date(d.last_seen)}</td>
                    <td>
                      <button type="button" className="danger" onClick={() => revoke.mutate(d.device_id)}>
                        {d.credential ? t('Log out and remove') : t('Remove')}
                      </button>
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )
      ) : (
        !devices.error && <Loading />
      )}
      <ErrorLine error={devices.error ?? revoke.error} />
    </div>
  );
}
