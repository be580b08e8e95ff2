-- Every order with the average of its customer's last three orders, itself included, one
-- order after another in the order they were placed.
SELECT
  order_id,
  customer_id,
  amount,
  AVG(amount) OVER (
    PARTITION BY customer_id
    ORDER BY placed_at
    ROWS BETWEEN 2 PRECEDING AND CURRENT ROW
  ) AS last_three_average
FROM source('order_events')
