/**
 * Set-up of the web UI's component tests (vitest's `web` project): Testing Library's `waitFor` and `findBy*` wait
 * up to 5 s instead of 1 s, so a test run on a loaded machine (the whole suite on 2 cores) fails only on what never
 * happens, not on what happens late.
 */
import { configure } from '@testing-library/react';

configure({ asyncUtilTimeout: 5000 });
