import { Reports } from '../../features/admin/FeedbackReports';
import { Translations } from '../../features/admin/Translations';

/** Feedback reports and translation suggestions (admin), with accept / reject of suggestions. */
export default function Feedback() {
  return (
    <div>
      <Reports />
      <Translations />
    </div>
  );
}
