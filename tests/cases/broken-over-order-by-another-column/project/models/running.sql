SELECT order_id, SUM(amount) OVER (PARTITION BY customer_id ORDER BY order_id) AS running_total
FROM source('orders')
