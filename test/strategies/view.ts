// The literal views of the strategy SDK's test helper: one implementation, used by the SDK's users and by these tests.
export { type ViewSpec, asJson, btcUsdt, investment, marketRules, plan, slotView } from '../../strategies/sdk-testing.ts';
