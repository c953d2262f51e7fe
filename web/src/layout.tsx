/**
 * The frame of every page: skip link, header with navigation (behind a Menu button at phone width), language
 * switch and sign-out, the page.
 */
import { Suspense, useEffect, useState } from 'react';
import { NavLink, Outlet, useLocation, useNavigation } from 'react-router';
import { useMe, useResetOnSignOut, useToken } from './auth';
import { LOCALES, useI18n, type Locale } from './i18n';
import { session } from './session';
import { Loading } from './ui';
import { FeedbackButtons } from './feedback';
import { LogOut, Menu } from 'lucide-react';
import { icon } from './components/icon';

export function Layout() {
  const { t, locale, setLocale } = useI18n();
  const token = useToken();
  const me = useMe();
  const nav = useNavigation();
  useResetOnSignOut();
  const [menu, setMenu] = useState(false);
  const { pathname } = useLocation();
  // A link followed from the phone menu closes it (also one to the page already shown).
  useEffect(() => setMenu(false), [pathname]);
  return (
    <>
      <a className="skip" href="#main">
        {t('Skip to content')}
      </a>
      <header className="top">
        <NavLink to="/" className="brand">
          CRM
        </NavLink>
        <button
          type="button"
          className="menu-toggle"
          aria-expanded={menu}
          aria-controls="main-nav"
          onClick={() => setMenu(!menu)}
        >
          <Menu {...icon} />
          {t('Menu')}
        </button>
        <nav
          id="main-nav"
          aria-label={t('Main')}
          className={menu ? 'open' : undefined}
          onClick={(e) => (e.target as HTMLElement).closest('a') && setMenu(false)}
        >
          {token ? (
            <>
              <NavLink to="/projects">{t('Projects')}</NavLink>
              <NavLink to="/onboarding">{t('Getting started')}</NavLink>
              <NavLink to="/account">{t('Account')}</NavLink>
              <NavLink to="/help">{t('Help')}</NavLink>
              {me.data?.role === 'admin' && <NavLink to="/admin">{t('Admin')}</NavLink>}
            </>
          ) : (
            <>
              <NavLink to="/login">{t('Sign in')}</NavLink>
              <NavLink to="/register">{t('Register')}</NavLink>
            </>
          )}
        </nav>
        <div className="tools">
          <label className="sr-only" htmlFor="lang">
            {t('Language')}
          </label>
          <select id="lang" value={locale} onChange={(e) => setLocale(e.target.value as Locale)}>
            {LOCALES.map((l) => (
              <option key={l.code} value={l.code}>
                {l.label}
              </option>
            ))}
          </select>
          {token && (
            <button type="button" className="link" onClick={() => session.signOut()}>
              <LogOut {...icon} />
              {t('Sign out')}
            </button>
          )}
        </div>
      </header>
      <main id="main" tabIndex={-1} aria-busy={nav.state === 'loading'}>
        <Suspense fallback={<Loading />}>
          <Outlet />
        </Suspense>
      </main>
      {token && (
        <footer className="bottom">
          <FeedbackButtons />
        </footer>
      )}
    </>
  );
}
