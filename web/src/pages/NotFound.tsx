import { Link } from 'react-router';
import { useI18n } from '../i18n';
import { PageTitle } from '../ui';

export default function NotFound() {
  const { t } = useI18n();
  return (
    <section className="narrow">
      <PageTitle>{t('Page not found')}</PageTitle>
      <p>
        <Link to="/">{t('Go to the start page')}</Link>
      </p>
    </section>
  );
}
