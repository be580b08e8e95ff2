SELECT order_id, LAG(amount) OVER (PARTITION BY customer_id ORDER BY placed_at ROWS BETWEEN 2 PRECEDING AND CURRENT ROW) AS framed
FROM source('orders')
