import { answerableAt, answersAutomatically, consumptionRequestBody, consumptionSettingsOf } from '../../libs/rails/src/refunds/consumption.js';

describe('refund requests: consumption settings and the Send Consumption Information body', () => {
  it('settings default to off, without consent, no preference, no sample', () => {
    const off = { mode: 'off', customerConsented: false, refundPreference: 'no_preference', sampleContentProvided: false };
    expect(consumptionSettingsOf(undefined)).toEqual(off);
    expect(consumptionSettingsOf({})).toEqual(off);
    expect(consumptionSettingsOf({ consumption: { mode: 'auto' } })).toEqual({ ...off, mode: 'auto' });
    expect(consumptionSettingsOf({ consumption: { mode: 'nope' as never, customerConsented: 'yes' as never } })).toEqual(off);
  });

  it('answers automatically only in auto mode with the customer consent', () => {
    const base = consumptionSettingsOf({});
    expect(answersAutomatically({ ...base, mode: 'auto', customerConsented: true })).toBe(true);
    expect(answersAutomatically({ ...base, mode: 'auto', customerConsented: false })).toBe(false);
    expect(answersAutomatically({ ...base, mode: 'manual', customerConsented: true })).toBe(false);
    expect(answersAutomatically({ ...base, mode: 'off', customerConsented: true })).toBe(false);
  });

  it('the body says delivered, maps the preference to the store words and leaves no_preference out', () => {
    const fields = { customerConsented: true, sampleContentProvided: true };
    expect(consumptionRequestBody({ ...fields, refundPreference: 'decline' })).toEqual({
      customerConsented: true,
      deliveryStatus: 'DELIVERED',
      sampleContentProvided: true,
      refundPreference: 'DECLINE',
    });
    expect(consumptionRequestBody({ ...fields, refundPreference: 'grant_full' }).refundPreference).toBe('GRANT_FULL');
    expect(consumptionRequestBody({ ...fields, refundPreference: 'grant_prorated' }).refundPreference).toBe('GRANT_PRORATED');
    expect(consumptionRequestBody({ ...fields, refundPreference: 'no_preference' })).toEqual({
      customerConsented: true,
      deliveryStatus: 'DELIVERED',
      sampleContentProvided: true,
    });
  });

  it('never makes a body without the customer consent', () => {
    expect(() => consumptionRequestBody({ customerConsented: false, refundPreference: 'decline', sampleContentProvided: false })).toThrow(/consent/);
  });

  it('a request is answerable strictly before its deadline', () => {
    expect(answerableAt(1_000, 999_999)).toBe(true);
    expect(answerableAt(1_000, 1_000_000)).toBe(false);
  });
});
