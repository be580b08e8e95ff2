-- Every order with the amount and time of its customer's order before it, and the amount
-- two orders back: null until there are that many. Orders of the same instant are added
-- together (the frame is RANGE, Flink's default), so each of them reads the row before the
-- last of them.
SELECT
  order_id,
  customer_id,
  amount,
  LAG(amount) OVER by_time AS previous_amount,
  LAG(placed_at) OVER by_time AS previous_at,
  LAG(amount, 2) OVER by_time AS amount_two_back
FROM source('order_events')
WINDOW by_time AS (PARTITION BY customer_id ORDER BY placed_at)
