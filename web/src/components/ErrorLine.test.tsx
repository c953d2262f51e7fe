import { cleanup, render, screen, waitFor } from '@testing-library/react';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { ApiFailure } from '../api/client';
import { I18nProvider } from '../i18n';
import { ErrorLine } from './ErrorLine';

afterEach(() => {
  cleanup();
  vi.unstubAllGlobals();
  localStorage.removeItem('crm.locale');
});

describe('ErrorLine', () => {
  it('in Ukrainian: the code’s words, and each validation detail under the field’s own label', async () => {
    localStorage.setItem('crm.locale', 'uk');
    const uk = {
      'The request was not accepted: check the fields.': 'Запит не прийнято: перевірте поля.',
      'at most {n} characters': 'щонайбільше {n} символів',
    };
    vi.stubGlobal(
      'fetch',
      async () =>
        new Response(JSON.stringify({ locale: 'uk', messages: uk, plurals: {} }), {
          headers: { 'content-type': 'application/json' },
        }),
    );
    const error = new ApiFailure(400, {
      error: 'invalid_request',
      message: 'body/title: must NOT have more than 500 characters',
      details: [{ path: 'body/title', message: 'must NOT have more than 500 characters' }],
    });
    render(
      <I18nProvider>
        <ErrorLine error={error} fields={{ title: 'Назва' }} />
      </I18nProvider>,
    );
    await waitFor(() =>
      expect(screen.getByRole('alert').textContent).toBe(
        'Запит не прийнято: перевірте поля.Назва: щонайбільше 500 символів',
      ),
    );
  });
});
