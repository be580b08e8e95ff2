-- Every order with what its customer has spent and ordered so far, itself included. An order
-- is written once the watermark (a minute behind the latest order) passes it; orders placed
-- at the same instant count together and share their totals.
SELECT
  order_id,
  customer_id,
  amount,
  placed_at,
  SUM(amount) OVER (PARTITION BY customer_id ORDER BY placed_at) AS spent_so_far,
  COUNT(*) OVER (PARTITION BY customer_id ORDER BY placed_at) AS orders_so_far
FROM source('order_events')
