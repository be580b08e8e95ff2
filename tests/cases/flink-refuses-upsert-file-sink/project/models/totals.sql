SELECT customer_id, SUM(amount) AS total FROM source('orders') GROUP BY customer_id
